// Over 300 lines on purpose: one job (`ndbg trace --input`) from input validation through resume,
// shard selection and ordered output to its summary; each part is small and used only here.
import * as fs from 'fs';
import { z } from 'zod';
import { UserError } from '../util/errors';
import { invalidLine, JsonlWriter, readJsonl, skippingInvalid } from '../util/jsonl';
import { Progress } from '../util/progress';
import { traceBatch } from './index';
import { SandboxOptions, SandboxPool } from './pool';
import type { ProgramRecord, TraceRecord } from './types';
import { shardOfKey, type ShardSpec } from '../util/shard';

/**
 * `ndbg trace --input programs.jsonl --out traces.jsonl`: the resumable batch job.
 *
 * - Input lines are CruxEval-style `{id, code, input, entry?}`; a malformed line (bad JSON or a
 *   bad field) is reported with its line number and skipped, never aborting the batch.
 * - Resume: ids already in --out are skipped. A truncated last line (a crash mid-write) is cut
 *   off the file first; earlier lines are never touched.
 * - Shards: `--shard I/N` keeps the programs whose id hashes (FNV-1a) to I mod N, so shards
 *   partition the ids whatever the input order, and each shard can run on its own machine.
 * - Output records are written in input order (deterministic bytes for a given input).
 */
export const ProgramSchema = z
  .object({
    id: z.union([z.string().min(1), z.number()]).transform(String),
    code: z.string(),
    input: z.string(),
    entry: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a Python identifier')
      .optional(),
  })
  .passthrough();

const ID_PREFIX = /^\{"id":\s*("(?:[^"\\]|\\.)*")/;

/**
 * Ids already written to `out`. A last line without its newline (the process died while
 * writing it) is cut off so appending continues on a clean line boundary.
 */
export function readDoneIds(out: string, warn: (msg: string) => void = () => undefined): Set<string> {
  const done = new Set<string>();
  if (!fs.existsSync(out)) return done;
  truncatePartialLastLine(out, warn);
  const text = fs.readFileSync(out, 'utf8');
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    lineNo++;
    const line = text.slice(start, end);
    start = end + 1;
    if (!line.trim()) continue;
    const m = ID_PREFIX.exec(line);
    try {
      const id = m ? (JSON.parse(m[1]) as string) : String((JSON.parse(line) as { id: unknown }).id);
      done.add(id);
    } catch {
      warn(`${out}:${lineNo}: unreadable record, its program will be traced again`);
    }
  }
  return done;
}

function truncatePartialLastLine(file: string, warn: (msg: string) => void): void {
  const size = fs.statSync(file).size;
  if (size === 0) return;
  const fd = fs.openSync(file, 'r+');
  try {
    const last = Buffer.alloc(1);
    fs.readSync(fd, last, 0, 1, size - 1);
    if (last[0] === 0x0a) return;
    // Scan back for the previous newline.
    const chunk = Buffer.alloc(64 * 1024);
    let pos = size;
    let cut = 0;
    while (pos > 0) {
      const n = Math.min(chunk.length, pos);
      pos -= n;
      fs.readSync(fd, chunk, 0, n, pos);
      const i = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (i >= 0) {
        cut = pos + i + 1;
        break;
      }
    }
    fs.ftruncateSync(fd, cut);
    warn(`${file}: removed a truncated last line (${size - cut} bytes) left by an interrupted run`);
  } finally {
    fs.closeSync(fd);
  }
}

export interface BatchJobOptions {
  input: string;
  out: string;
  workers: number;
  shard?: ShardSpec;
  sandbox: SandboxOptions;
  quiet?: boolean;
  /** Where warnings go (malformed lines etc.); default stderr. */
  warn?: (msg: string) => void;
}

export interface BatchSummary {
  input: string;
  out: string;
  isolation: string;
  lines: number;
  traced: number;
  skipped_done: number;
  other_shard: number;
  duplicates: number;
  malformed: number;
  malformed_lines: number[];
  by_status: Record<string, number>;
  by_limit: Record<string, number>;
  /** Most common error kinds (first word of the message) with counts and a few ids. */
  errors: Array<{ kind: string; count: number; examples: string[] }>;
  elapsed_s: number;
  programs_per_s: number;
  events: number;
  /** Programs run in the shared sandboxed child / in a fresh fork (docs/trace.md). */
  ran_shared: number;
  ran_forked: number;
}

export async function runTraceBatch(opts: BatchJobOptions): Promise<BatchSummary> {
  const warn = opts.warn ?? ((m: string) => process.stderr.write(`ndbg trace: ${m}\n`));
  if (!fs.existsSync(opts.input)) throw new UserError(`--input ${opts.input}: no such file`);
  const done = readDoneIds(opts.out, warn);
  const lines = countLines(opts.input);
  // Without --skip-invalid the first malformed line stops the batch before any program runs.
  if (!skippingInvalid()) {
    for await (const row of readJsonl<unknown>(opts.input, { invalid: 'yield' })) {
      if (row.error) invalidLine(row.error);
      const parsed = ProgramSchema.safeParse(row.value);
      if (!parsed.success) invalidLine(`${opts.input}:${row.lineNumber}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ')}`);
    }
  }
  const pool = new SandboxPool(Math.max(1, opts.workers), opts.sandbox);
  const summary: BatchSummary = {
    input: opts.input,
    out: opts.out,
    isolation: pool.mode,
    lines,
    traced: 0,
    skipped_done: 0,
    other_shard: 0,
    duplicates: 0,
    malformed: 0,
    malformed_lines: [],
    by_status: {},
    by_limit: {},
    errors: [],
    elapsed_s: 0,
    programs_per_s: 0,
    events: 0,
    ran_shared: 0,
    ran_forked: 0,
  };
  const errorKinds = new Map<string, { count: number; examples: string[] }>();
  const progress = new Progress('trace', lines, process.stderr, opts.quiet);
  const seen = new Set<string>();
  const start = Date.now();

  async function* programs(): AsyncGenerator<ProgramRecord> {
    for await (const row of readJsonl<unknown>(opts.input, { invalid: 'yield' })) {
      if (row.error) {
        malformed(row.lineNumber, row.error);
        continue;
      }
      const parsed = ProgramSchema.safeParse(row.value);
      if (!parsed.success) {
        const why = parsed.error.issues.map((i) => `${i.path.join('.') || '(record)'}: ${i.message}`).join('; ');
        malformed(row.lineNumber, `${opts.input}:${row.lineNumber}: ${why}`);
        continue;
      }
      const p = parsed.data as ProgramRecord;
      if (opts.shard && shardOfKey(p.id, opts.shard.count) !== opts.shard.index) {
        summary.other_shard++;
        progress.tick(1);
        continue;
      }
      if (done.has(p.id)) {
        summary.skipped_done++;
        progress.tick(1);
        continue;
      }
      if (seen.has(p.id)) {
        summary.duplicates++;
        progress.tick(1);
        warn(`${opts.input}:${row.lineNumber}: duplicate id "${p.id}" skipped`);
        continue;
      }
      seen.add(p.id);
      yield p;
    }
  }

  function malformed(lineNumber: number, message: string): void {
    // An error naming file:line unless --skip-invalid (then counted in the summary and skipped).
    invalidLine(message);
    summary.malformed++;
    progress.tick(1);
    if (summary.malformed_lines.length < 100) summary.malformed_lines.push(lineNumber);
    warn(`${message} (line skipped)`);
  }

  const writer = new JsonlWriter(opts.out, true);
  try {
    for await (const rec of traceBatch(programs(), { pool })) {
      writer.write(rec);
      tally(summary, errorKinds, rec);
      progress.tick(1, { errors: (summary.by_status.error ?? 0) + (summary.by_status.never ?? 0), malformed: summary.malformed });
    }
    const stats = await pool.stats();
    summary.ran_shared = stats.shared;
    summary.ran_forked = stats.forked;
  } finally {
    writer.close();
    await pool.close();
  }
  summary.elapsed_s = (Date.now() - start) / 1000;
  summary.programs_per_s = summary.traced / Math.max(summary.elapsed_s, 1e-3);
  summary.errors = [...errorKinds.entries()]
    .map(([kind, v]) => ({ kind, ...v }))
    .sort((a, b) => b.count - a.count || a.kind.localeCompare(b.kind))
    .slice(0, 15);
  progress.finish();
  return summary;
}

function tally(summary: BatchSummary, kinds: Map<string, { count: number; examples: string[] }>, rec: TraceRecord): void {
  summary.traced++;
  summary.events += rec.events.length;
  summary.by_status[rec.status] = (summary.by_status[rec.status] ?? 0) + 1;
  if (rec.limit) summary.by_limit[rec.limit] = (summary.by_limit[rec.limit] ?? 0) + 1;
  if (rec.status !== 'normal') {
    const kind = rec.limit ? `${rec.status}/${rec.limit}` : (rec.error ?? 'error').split(':')[0];
    const k = kinds.get(kind) ?? { count: 0, examples: [] };
    k.count++;
    if (k.examples.length < 3) k.examples.push(rec.id);
    kinds.set(kind, k);
  }
}

function countLines(file: string): number {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(1 << 20);
  let n = 0;
  let last = 0x0a;
  try {
    for (;;) {
      const got = fs.readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      for (let i = 0; i < got; i++) if (buf[i] === 0x0a) n++;
      last = buf[got - 1];
    }
  } finally {
    fs.closeSync(fd);
  }
  return last === 0x0a ? n : n + 1;
}

/** The summary as the lines the CLI prints at the end. */
export function formatSummary(s: BatchSummary): string {
  const out: string[] = [];
  const status = Object.entries(s.by_status).map(([k, v]) => `${k} ${v}`).join(', ') || 'none';
  out.push(`traced ${s.traced} programs in ${s.elapsed_s.toFixed(1)}s (${s.programs_per_s.toFixed(0)}/s, ${s.events} events, sandbox ${s.isolation}): ${status}`);
  if (s.traced) out.push(`processes: ${s.ran_shared} in the shared child, ${s.ran_forked} in fresh forks`);
  const skipped = [
    s.skipped_done ? `${s.skipped_done} already in ${s.out}` : '',
    s.other_shard ? `${s.other_shard} in other shards` : '',
    s.duplicates ? `${s.duplicates} duplicate ids` : '',
    s.malformed ? `${s.malformed} malformed lines (${s.malformed_lines.slice(0, 10).join(', ')}${s.malformed > 10 ? ', ...' : ''})` : '',
  ].filter(Boolean);
  if (skipped.length) out.push(`skipped: ${skipped.join(', ')}`);
  if (s.errors.length) {
    out.push('not normal, by kind:');
    for (const e of s.errors) out.push(`  ${String(e.count).padStart(6)}  ${e.kind}  (e.g. ${e.examples.join(', ')})`);
  }
  return out.join('\n');
}

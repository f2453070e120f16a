/**
 * The file-level jobs behind `ndbg ndl`: read trace JSONL, write document JSONL, check round
 * trips. Bad input stops with a UserError naming the file and line; every document written
 * before that stays on disk (one write per record).
 */
import * as fs from 'fs';
import * as path from 'path';
import { z } from 'zod';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { replaceFileAtomic } from '../util/fsync';
import { AtomicJsonlWriter, invalidLine, readJsonl } from '../util/jsonl';
import { Progress } from '../util/progress';
import type { SamplerConfig } from './config';
import { allStepDocuments, NdlRecord, sampleDocuments, treeFor } from './generate';
import type { TokenCounter } from './sampler';
import { emptyStats, verifyDocument, VerifyStats } from './verify';

const eventSchema = z.object({
  event: z.enum(['call', 'line', 'return', 'exception']),
  depth: z.number().int().min(0),
  invocation: z.number().int().min(0),
  line: z.number().int(),
  src: z.string(),
  locals: z.record(z.string()),
  value: z.string().nullable(),
  func: z.string(),
  calls: z.array(z.number().int()).optional(),
});

/** The fields of a trace record this stage reads (others are kept but not checked). */
const traceSchema = z
  .object({
    id: z.string().min(1),
    code: z.string(),
    entry_call: z.string(),
    status: z.enum(['normal', 'error', 'never']),
    events: z.array(eventSchema),
  })
  .passthrough();

/** Streams the trace records of a JSONL file, validated; the first bad line is a UserError. */
export function readTraces(file: string): AsyncGenerator<TraceRecord> {
  return readValidated<TraceRecord>(file, traceSchema, 'a trace record');
}

/**
 * Streams the records of a JSONL --traces file that pass `schema`; a bad line is one error
 * naming file:line and the first bad field (`what` says what the line should have been).
 */
export async function* readValidated<T>(file: string, schema: z.ZodTypeAny, what: string): AsyncGenerator<T> {
  if (!fs.existsSync(file)) throw new UserError(`--traces ${file}: no such file`);
  for await (const line of readJsonl<unknown>(file)) {
    const r = schema.safeParse(line.value);
    if (!r.success) {
      const issue = r.error.issues[0];
      invalidLine(`${file}:${line.lineNumber}: not ${what}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
      continue;
    }
    yield r.data as T;
  }
}

export function countLines(file: string): number {
  if (!fs.existsSync(file)) throw new UserError(`--traces ${file}: no such file`);
  const text = fs.readFileSync(file, 'utf8');
  let n = 0;
  for (const line of text.split('\n')) if (line.trim() !== '') n++;
  return n;
}

export interface GenerateOptions {
  traces: string;
  out: string;
  seed: number;
  perProgram: number;
  policy: 'sampled' | 'all-step';
  config: SamplerConfig;
  countTokens?: TokenCounter;
  overwrite?: boolean;
  quiet?: boolean;
}

export interface GenerateSummary {
  programs: number;
  documents: number;
  forward: number;
  inverse: number;
  /** Documents not written because the trace had nothing in that direction. */
  skipped: number;
  /** Documents not written because the program context and one frame exceed config.maxTokens. */
  tooLong: number;
  frames: number;
}

export async function generateDocuments(opts: GenerateOptions): Promise<GenerateSummary> {
  if (fs.existsSync(opts.out) && !opts.overwrite) {
    throw new UserError(`--out ${opts.out} exists; pass --overwrite to replace it`);
  }
  const total = countLines(opts.traces);
  const progress = new Progress('ndl', total, process.stderr, opts.quiet);
  // Written under a temporary name and renamed when complete: a failed run leaves no partial --out.
  const writer = new AtomicJsonlWriter(opts.out);
  const summary: GenerateSummary = { programs: 0, documents: 0, forward: 0, inverse: 0, skipped: 0, tooLong: 0, frames: 0 };
  const pythons = new Set<string>();
  try {
    for await (const trace of readTraces(opts.traces)) {
      const python = (trace as { python?: unknown }).python;
      if (typeof python === 'string') pythons.add(python);
      let records: NdlRecord[];
      try {
        if (opts.policy === 'all-step') {
          records = allStepDocuments(trace);
          summary.skipped += 2 - records.length;
        } else {
          const r = sampleDocuments(trace, opts.seed, opts.perProgram, opts.config, { countTokens: opts.countTokens });
          records = r.records;
          summary.skipped += r.skipped;
          summary.tooLong += r.tooLong;
        }
      } catch (e) {
        throw new UserError(`${opts.traces}: trace ${trace.id}: ${(e as Error).message}`);
      }
      for (const rec of records) {
        writer.write(rec);
        summary.documents++;
        summary[rec.direction]++;
        summary.frames += rec.nodes.length;
      }
      summary.programs++;
      progress.tick(1, { docs: summary.documents });
    }
    writer.commit();
  } catch (e) {
    writer.abort();
    throw e;
  }
  writeDocumentsSidecar(opts.out, {
    traces: [...pythons],
    tracesFile: opts.traces,
    generator: { policy: opts.policy, seed: opts.seed, per_program: opts.perProgram, sampler: opts.config },
    documents: summary.documents,
  });
  progress.finish();
  return summary;
}

/**
 * OUT.manifest.json beside a documents file: the Python version(s) of the traces the documents
 * came from (traces differ between versions) and how they were sampled. `ndbg data build`
 * copies it into the data set manifest (src/data/sources.ts readSidecar).
 */
export function writeDocumentsSidecar(
  out: string,
  info: { traces: TraceRecord[] | string[]; tracesFile?: string; generator: unknown; documents: number },
): void {
  const versions = [...new Set(info.traces.map((t) => (typeof t === 'string' ? t : (t as { python?: unknown }).python)).filter((v): v is string => typeof v === 'string'))].sort();
  const sidecar = {
    format: 'ndbg-ndl-docs/1',
    python: versions.length ? versions.join(', ') : null,
    traces: info.tracesFile ?? null,
    traces_relative: info.tracesFile ? path.relative(path.dirname(path.resolve(out)), path.resolve(info.tracesFile)) : null,
    generator: info.generator,
    documents: info.documents,
  };
  replaceFileAtomic(`${out}.manifest.json`, JSON.stringify(sidecar, null, 2) + '\n');
}

export interface CheckSummary {
  programs: number;
  forward: VerifyStats;
  inverse: VerifyStats;
  /** Documents with at least one problem, with their first problems. */
  failures: Array<{ id: string; direction: string; doc: number; problems: string[] }>;
}

/** Samples documents (plus the all-step pair) for every trace and verifies each round trip. */
export async function checkRoundTrips(opts: Omit<GenerateOptions, 'out' | 'policy' | 'overwrite'>): Promise<CheckSummary> {
  const summary: CheckSummary = { programs: 0, forward: emptyStats(), inverse: emptyStats(), failures: [] };
  const progress = new Progress('ndl check', countLines(opts.traces), process.stderr, opts.quiet);
  for await (const trace of readTraces(opts.traces)) {
    const trees = { forward: treeFor(trace, 'forward'), inverse: treeFor(trace, 'inverse') };
    const records = [
      ...allStepDocuments(trace),
      ...sampleDocuments(trace, opts.seed, opts.perProgram, opts.config, { countTokens: opts.countTokens }).records,
    ];
    for (const r of records) {
      const tree = trees[r.direction];
      if (!tree) continue;
      const steps = r.nodes.map((node, k) => ({ node, action: r.actions[k] }));
      const problems = verifyDocument(tree, { direction: r.direction, steps, end: r.end }, r.text, summary[r.direction]);
      if (problems.length > 0) summary.failures.push({ id: r.id, direction: r.direction, doc: r.doc, problems: problems.slice(0, 5) });
    }
    summary.programs++;
    progress.tick(1, { failures: summary.failures.length });
  }
  progress.finish();
  return summary;
}

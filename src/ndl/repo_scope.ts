/**
 * Entry-point sampling for repository-level documents (docs/ndl.md, "Repository documents";
 * the paper's §4.3: "we sample a single function call from the stack as the entry point for
 * each debugger trajectory, which truncates the trace to the corresponding function scope").
 *
 * From a repository trace (src/trace/repo.ts) it draws invocations, seeded, and turns each into
 * a scoped TraceRecord (`level: 'repository'`): the invocation's events and its callees', with
 * depths re-based so the entry is depth 1, and as `code` the multi-file SRC of repo_context.ts.
 * Every later stage (trees, oracle, sampler, formatter, pdb check, data) takes it as it takes a
 * function-level trace.
 */
import { z } from 'zod';
import { statementLines } from '../debugger';
import type { RepoTraceRecord } from '../trace/repo';
import type { TraceEvent, TraceRecord } from '../trace/types';
import { Rng } from '../util/rng';
import { ChosenBlock, fitContext, innermostBlock } from './repo_context';
import { approxTokenCount, TokenCounter } from './sampler';

export const entrySamplingSchema = z
  .object({
    /** Entry invocations drawn per repository trace (fewer when it has fewer candidates). */
    perTrace: z.number().int().min(1).default(4),
    /** Depth range of the entry in the repository trace (0: the test method or called function). */
    minDepth: z.number().int().min(0).default(0),
    maxDepth: z.number().int().min(0).default(8),
    /** Whether a call of a function already on the stack (an inner recursive call) may be an entry. */
    recursion: z.boolean().default(true),
    /** Events in the scope, at least / at most. */
    minEvents: z.number().int().min(1).default(4),
    maxEvents: z.number().int().min(1).default(4000),
    /** Token budget of the SRC (approximate counter unless the caller passes one). */
    contextTokens: z.number().int().min(1).default(1024),
  })
  .strict();

export type EntrySampling = z.infer<typeof entrySamplingSchema>;

export interface EntryCandidate {
  /** Index of the call event and of the invocation's return event in the repository trace. */
  start: number;
  end: number;
}

/**
 * The invocations that may start a trajectory: a call that returns within the trace (not cut
 * off), not a generator's (its scope would end at a yield) nor a resumption, a named function
 * (not `<lambda>`, `<listcomp>`...), in the depth range, within the event range, and — unless
 * `recursion` — not a call of a function already on the stack.
 */
export function entryCandidates(rec: RepoTraceRecord, opts: EntrySampling): EntryCandidate[] {
  const events = rec.events;
  const out: EntryCandidate[] = [];
  const stack: Array<{ key: string; start: number; depth: number }> = [];
  const fileOf = invocationFiles(rec);
  events.forEach((e, i) => {
    if (e.event === 'call') {
      while (stack.length > 0 && stack[stack.length - 1].depth >= e.depth) stack.pop();
      const key = `${fileOf.get(e.invocation)}:${e.func}:${e.line}`;
      const recursive = stack.some((s) => s.key === key);
      stack.push({ key, start: i, depth: e.depth });
      if (e.resumed || e.func.startsWith('<') || (recursive && !opts.recursion)) return;
      if (e.depth < opts.minDepth || e.depth > opts.maxDepth) return;
      const end = returnIndex(events, i);
      if (end < 0 || events[end].yield) return;
      const size = end - i + 1;
      if (size >= opts.minEvents && size <= opts.maxEvents) out.push({ start: i, end });
    }
  });
  return out;
}

/** Index of the return event of the invocation called at `start`, or -1 (cut off). */
function returnIndex(events: TraceEvent[], start: number): number {
  const { invocation, depth } = events[start];
  for (let j = start + 1; j < events.length; j++) {
    const e = events[j];
    if (e.depth < depth || (e.depth === depth && e.invocation !== invocation)) return -1;
    if (e.depth === depth && e.event === 'return') return j;
  }
  return -1;
}

/** invocation id -> file, from the call events (the only ones a repository trace marks). */
function invocationFiles(rec: RepoTraceRecord): Map<number, string> {
  const m = new Map<number, string>();
  for (const e of rec.events) if (e.event === 'call' && e.file !== undefined) m.set(e.invocation, e.file);
  return m;
}

/** `perTrace` candidates drawn without replacement, seeded by (seed, trace id), in trace order. */
export function sampleEntries(rec: RepoTraceRecord, seed: number, opts: EntrySampling): EntryCandidate[] {
  const all = entryCandidates(rec, opts);
  const picked = Rng.from(seed, rec.id, 'repo-entry').shuffle(all.map((_, k) => k)).slice(0, opts.perTrace);
  return picked.sort((a, b) => a - b).map((k) => all[k]);
}

/** The scoped TraceRecord of one candidate (see the file comment). */
export function scopeTrace(rec: RepoTraceRecord, c: EntryCandidate, opts: EntrySampling, count: TokenCounter = approxTokenCount): TraceRecord {
  const fileOf = invocationFiles(rec);
  const entry = rec.events[c.start];
  const shift = entry.depth - 1;
  const events: TraceEvent[] = rec.events.slice(c.start, c.end + 1).map((e) => {
    const out: TraceEvent = { ...e, depth: e.depth - shift };
    const file = fileOf.get(e.invocation);
    if (file !== undefined) out.file = file;
    return out;
  });
  const candidates: ChosenBlock[] = [];
  for (const e of events) {
    if (e.event !== 'call' || e.file === undefined) continue;
    const block = innermostBlock(rec.blocks[e.file], e.line);
    if (block && !candidates.some((x) => x.file === e.file && x.block === block)) candidates.push({ file: e.file, block });
  }
  const { chosen, text, omitted } = fitContext(candidates, rec.files, opts.contextTokens, count);
  const last = events[events.length - 1];
  const raised = last.value === null;
  const trace: TraceRecord = {
    id: `${rec.id}@${entry.invocation}`,
    code: text,
    entry_call: entry.func,
    python: rec.python,
    status: raised ? 'error' : 'normal',
    events,
    level: 'repository',
    scope: {
      repo_id: rec.repo_id,
      repo: rec.repo,
      path: rec.path,
      entry: rec.entry,
      trace_id: rec.id,
      invocation: entry.invocation,
      depth: entry.depth,
      func: entry.func,
      file: entry.file ?? '',
      blocks: chosen.map((b) => [b.file, b.block[0], b.block[2]]),
      omitted,
      statement_lines: blockStatementLines(chosen, rec.files),
      repr_cap: rec.bounds.repr_cap,
    },
  };
  if (raised) {
    const exc = [...events].reverse().find((e) => e.event === 'exception' && e.invocation === entry.invocation);
    trace.error = exc?.value ?? 'exception';
  }
  return trace;
}

/** The statement lines (source.ts statementLines) of the chosen blocks, as file lines. */
function blockStatementLines(chosen: ChosenBlock[], files: Record<string, string>): Array<{ file: string; line: number; src: string }> {
  const out: Array<{ file: string; line: number; src: string }> = [];
  for (const { file, block } of chosen) {
    const lines = (files[file] ?? '').split('\n').slice(block[0] - 1, block[2]);
    for (const s of statementLines(lines.join('\n'))) out.push({ file, line: block[0] + s.line - 1, src: s.src });
  }
  return out;
}

/** The scoped traces of one repository trace: sampleEntries, each scoped. */
export function scopedTraces(rec: RepoTraceRecord, seed: number, opts: EntrySampling, count?: TokenCounter): TraceRecord[] {
  return sampleEntries(rec, seed, opts).map((c) => scopeTrace(rec, c, opts, count));
}

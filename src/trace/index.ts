/**
 * The tracer stage's API (docs/trace.md). Every program runs sandboxed: one forked child
 * process per program under a long-lived Python worker, with a wall-clock kill, rlimits, a
 * private working directory and bubblewrap isolation where available.
 *
 *   traceProgram(program)            one program -> TraceRecord
 *   traceBatch(programs, {workers})  many programs -> TraceRecords, in input order
 *   tracePrograms(programs, workers) the same collected into an array, with a progress bar
 *   runSandboxed(code)               run code as __main__ (no tracing) -> status/stdout/error
 *   checkAssertion(code, assertion)  CruxEval's `assert f(INPUT) == OUTPUT` harness
 *   new SandboxPool(workers, opts)   keep workers alive across calls (the functions above
 *                                    accept `pool` to reuse one)
 */
import { Progress } from '../util/progress';
import { SandboxOptions, SandboxPool, SandboxResult } from './pool';
import type { ProgramRecord, RunStatus, TraceRecord } from './types';

export { SandboxPool, pythonVersion } from './pool';
export type { SandboxOptions, SandboxResult } from './pool';
export { resolveIsolation } from './isolation';
export type { IsolationMode, IsolationChoice } from './isolation';
export { traceInProcess } from './inprocess';
export { rawTracer, sandboxTracer } from './tracers';
export * from './types';

/** A program with its entry call written out, e.g. from `--program FILE --call 'g(1, 2)'`. */
export interface CallRecord {
  id?: string;
  code: string;
  call: string;
}

export interface TraceOptions extends SandboxOptions {
  /** Reuse these workers (not closed afterwards); otherwise a pool is made and closed. */
  pool?: SandboxPool;
}

export interface BatchOptions extends TraceOptions {
  /** Number of sandbox workers (parallel programs) when no pool is given; default 1. */
  workers?: number;
}

/** `f(INPUT)`: the entry function name (default `f`) followed by the input in parentheses. */
export function entryCall(p: ProgramRecord): string {
  return `${p.entry ?? 'f'}(${p.input})`;
}

function requestOf(p: ProgramRecord | CallRecord): { id: string; code: string; call: string } {
  if ('call' in p && typeof p.call === 'string') return { id: p.id ?? 'program', code: p.code, call: p.call };
  const q = p as ProgramRecord;
  return { id: q.id, code: q.code, call: entryCall(q) };
}

function asTraceRecord(r: SandboxResult): TraceRecord {
  return r as unknown as TraceRecord;
}

async function withPool<T>(opts: BatchOptions, fn: (pool: SandboxPool) => Promise<T>): Promise<T> {
  const pool = opts.pool ?? new SandboxPool(opts.workers ?? 1, opts);
  try {
    return await fn(pool);
  } finally {
    if (!opts.pool) await pool.close();
  }
}

/** Traces one program in the sandbox. Program errors are data: check `status`. */
export function traceProgram(program: ProgramRecord | CallRecord, opts: TraceOptions = {}): Promise<TraceRecord> {
  const { id, code, call } = requestOf(program);
  return withPool(opts, async (pool) => asTraceRecord(await pool.trace(id, code, call)));
}

/**
 * Traces programs with `workers` sandbox workers and yields their records in input order
 * (so the output bytes do not depend on scheduling). Input may be an async stream; at most a
 * bounded window of programs is in flight.
 */
export async function* traceBatch(
  programs: Iterable<ProgramRecord | CallRecord> | AsyncIterable<ProgramRecord | CallRecord>,
  opts: BatchOptions = {},
): AsyncGenerator<TraceRecord> {
  const pool = opts.pool ?? new SandboxPool(opts.workers ?? 1, opts);
  const window = Math.max(16, pool.size * 16);
  const inflight: Promise<SandboxResult>[] = [];
  try {
    for await (const p of programs) {
      const { id, code, call } = requestOf(p);
      inflight.push(pool.trace(id, code, call));
      if (inflight.length >= window) yield asTraceRecord(await inflight.shift()!);
    }
    while (inflight.length) yield asTraceRecord(await inflight.shift()!);
  } finally {
    if (!opts.pool) await pool.close();
  }
}

/** traceBatch collected in input order, with a progress bar on stderr (none when quiet). */
export async function tracePrograms(programs: ProgramRecord[], workers = 1, quiet = false): Promise<TraceRecord[]> {
  const progress = new Progress('trace', programs.length, process.stderr, quiet);
  const out: TraceRecord[] = [];
  for await (const t of traceBatch(programs, { workers })) {
    out.push(t);
    progress.tick(1);
  }
  progress.finish();
  return out;
}

export interface ExecResult {
  status: RunStatus;
  error?: string;
  limit?: string;
  stdout?: string;
  stderr?: string;
  isolation?: string;
  blocked?: string[];
}

/** Runs `code` as the `__main__` module in the sandbox (no tracing): status, output, error. */
export function runSandboxed(code: string, opts: TraceOptions = {}): Promise<ExecResult> {
  return withPool(opts, async (pool) => {
    const r = await pool.exec(code);
    delete (r as Record<string, unknown>).id;
    return r as unknown as ExecResult;
  });
}

/**
 * CruxEval's check: runs `code` followed by `assertion` (e.g. `assert f(1) == 2`) in the
 * sandbox. `passed` is true only when it ran to the end with status normal.
 */
export async function checkAssertion(
  code: string,
  assertion: string,
  opts: TraceOptions = {},
): Promise<ExecResult & { passed: boolean }> {
  const r = await runSandboxed(`${code.replace(/\n+$/, '')}\n${assertion}\n`, opts);
  return { ...r, passed: r.status === 'normal' };
}

/** repr of the value the entry function (depth 1) returned, or undefined if it did not return. */
export function entryReturnValue(rec: TraceRecord): string | null | undefined {
  for (let i = rec.events.length - 1; i >= 0; i--) {
    const e = rec.events[i];
    if (e.depth === 1 && e.event === 'return' && !e.yield) return e.value;
  }
  return undefined;
}

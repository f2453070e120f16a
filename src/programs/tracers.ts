import { SandboxPool, type SandboxOptions } from '../trace';
import { traceInProcess } from '../trace/inprocess';
import type { ProgramRecord, TraceRecord } from '../trace/types';

/**
 * How the program stage runs programs: any function from program records to their trace
 * records in the same order. The filters take one as a parameter, so tests can use the raw
 * in-process tracer and `ndbg programs generate` the sandbox (generated code is untrusted-ish:
 * a generator bug could loop inside a builtin, where only the sandbox's timeout helps).
 */
export type Tracer = (programs: ProgramRecord[]) => Promise<TraceRecord[]>;

export interface ClosableTracer {
  trace: Tracer;
  close(): Promise<void>;
  /** For reports: "sandbox (bwrap, 2 workers)", "raw in-process". */
  describe: string;
}

/** The unsandboxed tracer (one python3 process per call): trusted inputs only. */
export function rawTracer(): ClosableTracer {
  return {
    trace: async (programs) => traceInProcess(programs),
    close: async () => undefined,
    describe: 'raw in-process tracer (no sandbox)',
  };
}

/** The sandboxed batch tracer of src/trace (forked child per program, timeout, rlimits). */
export function sandboxTracer(workers: number, opts: SandboxOptions = {}): ClosableTracer {
  const pool = new SandboxPool(workers, opts);
  return {
    trace: async (programs) =>
      (await Promise.all(programs.map((p) => pool.trace(p.id, p.code, `${p.entry ?? 'f'}(${p.input})`)))) as unknown as TraceRecord[],
    close: () => pool.close(),
    describe: `sandbox (${pool.mode}, ${workers} worker${workers === 1 ? '' : 's'})`,
  };
}

import type { ClosableTracer, ProgramRun } from '../programs/types';
import { traceInProcess } from './inprocess';
import { SandboxPool, type SandboxOptions } from './pool';

/** The tracers the program stage's filters run candidates with (src/programs/types.ts `Tracer`). */

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
      (await Promise.all(programs.map((p) => pool.trace(p.id, p.code, `${p.entry ?? 'f'}(${p.input})`)))) as unknown as ProgramRun[],
    close: () => pool.close(),
    describe: `sandbox (${pool.mode}, ${workers} worker${workers === 1 ? '' : 's'})`,
  };
}

/**
 * Fault injection for the checkpoint writer, used by the crash tests: with
 * `NDBG_FAULT_CHECKPOINT=POINT` (or `POINT@STEP`, only at that step's checkpoint) the process
 * SIGKILLs itself when the writer reaches POINT, exactly as a pre-empted job would die there.
 * Unset (the normal case) it costs one string comparison per point.
 * `NDBG_FAULT_ACTION=throw` throws instead (in-process tests: nothing between the fault point and
 * the test's catch touches the checkpoint files, so the disk is left exactly as a kill leaves it).
 */
export const FAULT_POINTS = [
  'tmp-created', // temp dir exists, empty
  'weights-written', // model.safetensors done
  'optimizer-written', // optimizer.safetensors done
  'marker-written', // every file + COMPLETE in the temp dir, not yet renamed
  'renamed', // checkpoint in place, parent dir not yet synced, old ones not pruned
  'pruning', // an old checkpoint half deleted
] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export function maybeFault(point: FaultPoint, step: number): void {
  const spec = process.env.NDBG_FAULT_CHECKPOINT;
  if (!spec) return;
  const [p, s] = spec.split('@');
  if (p !== point) return;
  if (s !== undefined && Number(s) !== step) return;
  if (process.env.NDBG_FAULT_ACTION === 'throw') throw new InjectedFault(point, step);
  process.kill(process.pid, 'SIGKILL');
}

/**
 * `NDBG_FAULT_AFTER_STEP=N`: SIGKILL right after step N's metrics line, before anything else of
 * that step (its checkpoint) — a kill at a chosen point of the loop rather than wherever a timer
 * in the test happens to land, so the crash test does not depend on the machine's speed.
 */
export function maybeKillAfterStep(step: number): void {
  const at = process.env.NDBG_FAULT_AFTER_STEP;
  if (at !== undefined && Number(at) === step) process.kill(process.pid, 'SIGKILL');
}

export class InjectedFault extends Error {
  constructor(
    readonly point: FaultPoint,
    readonly step: number,
  ) {
    super(`injected fault at checkpoint point ${point} (step ${step})`);
  }
}

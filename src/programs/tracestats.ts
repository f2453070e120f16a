import type { ProgramRun } from './types';

/**
 * What the summaries report about one run. Definitions (the same for generated programs and
 * for CruxEval, so the numbers compare):
 *   events     trace events of the program's own functions (depth >= 1; the harness's `main`
 *              wrapper is not counted)
 *   maxDepth   deepest call depth reached, with the tracer's numbering: f = 1, a helper f
 *              calls = 2, its callee = 3 ... (recursive calls count as nesting too)
 *   recursion  some function was called while an earlier call of it was still active
 *   exception  at least one `exception` event (raised, caught or not)
 */
export interface TraceStats {
  status: ProgramRun['status'];
  events: number;
  maxDepth: number;
  recursion: boolean;
  exception: boolean;
  error?: string;
  limit?: string;
  /** repr of f's return value when the run ended normally. */
  output?: string;
}

export function traceStats(rec: ProgramRun): TraceStats {
  let events = 0;
  let maxDepth = 0;
  let recursion = false;
  let exception = false;
  let output: string | undefined;
  const stack: Array<{ inv: number; func: string }> = [];
  for (const e of rec.events) {
    if (e.depth >= 1) {
      events++;
      if (e.depth > maxDepth) maxDepth = e.depth;
    }
    if (e.event === 'exception') exception = true;
    if (e.event === 'call') {
      if (e.depth >= 1 && stack.some((f) => f.func === e.func)) recursion = true;
      stack.push({ inv: e.invocation, func: e.func });
    } else if (e.event === 'return') {
      const i = stack.map((f) => f.inv).lastIndexOf(e.invocation);
      if (i >= 0) stack.splice(i);
      if (e.depth === 1 && rec.status === 'normal' && e.value !== null) output = e.value;
    }
  }
  const out: TraceStats = { status: rec.status, events, maxDepth, recursion, exception };
  if (rec.error !== undefined) out.error = rec.error;
  if (rec.limit !== undefined) out.limit = rec.limit;
  if (output !== undefined) out.output = output;
  return out;
}

/**
 * The part of a trace that must be identical across runs for the program to count as
 * deterministic: everything the program's own frames show (depth >= 1), and how it ended.
 * The `main` wrapper is left out because the perturbed second run shifts its line numbers.
 */
export function traceFingerprint(rec: ProgramRun): string {
  const evs = rec.events.filter((e) => e.depth >= 1).map((e) => [e.event, e.depth, e.line, e.func, e.locals, e.value, e.calls ?? []]);
  return JSON.stringify([rec.status, rec.error ?? null, evs]);
}

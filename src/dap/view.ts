/**
 * What a DAP client sees at a stop, independent of where it came from (the model's predicted
 * frames or the real run): the call stack, innermost first, and what kind of stop it is.
 */
import type { ExitKind } from '../ndl/tokens';

export interface FrameView {
  /** Function name (code object name for the real run; the enclosing `def` for predictions). */
  func: string;
  /** 1-based line in the CONTEXT (the program's lines, then main); undefined when the predicted SRC is no line of it. */
  line?: number;
  /** The `main` wrapper around the entry call (not in the user's file). */
  entry: boolean;
  /** repr strings of the frame's locals; for a caller frame, as they were when it made the call. */
  locals: Record<string, string>;
  /** False when some variables are unknown (a prediction's delta against a state no frame shows). */
  exact: boolean;
}

/**
 * One NDL position seen as a DAP stop. `line`: the top frame is at a line event. `return`: a
 * function returned (or a generator yielded, or an exception left it: value null); a DAP client,
 * like debugpy, is shown the caller at its call line, so `frames` starts with the caller and
 * `returned` names the function that left.
 * `event`: any other NDL event (call, exception, the inverse events) shown as is.
 */
export type StopView =
  | { kind: 'line' | 'event'; event: string; frames: FrameView[]; value?: string | null }
  | { kind: 'return'; event: string; frames: FrameView[]; value: string | null; returned: string }
  | { kind: 'exit'; exit: ExitKind };

/** Depth as both adapters count it: main is 0 (debugpy's runner module frame is not counted). */
export function depthOf(v: StopView): number {
  return v.kind === 'exit' ? -1 : v.frames.length - 1;
}

/** The components of `model` that differ from `real`, by name (for verify's marks). */
export function differences(model: StopView, real: StopView): string[] {
  if (model.kind === 'exit' || real.kind === 'exit') return model.kind === real.kind && model.kind === 'exit' && real.kind === 'exit' && model.exit === real.exit ? [] : ['exit'];
  const out: string[] = [];
  const m = model.frames[0];
  const r = real.frames[0];
  if (model.kind !== real.kind || model.event !== real.event) out.push('event');
  if (m.line !== r.line) out.push('line');
  if (m.func !== r.func) out.push('function');
  if (model.frames.length !== real.frames.length) out.push('depth');
  if (!sameLocals(m.locals, r.locals)) out.push('locals');
  if (model.kind === 'return' && real.kind === 'return' && model.value !== real.value) out.push('value');
  return out;
}

export function sameLocals(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && b[k] === a[k]);
}

/** `line 4 in count, depth 1: {'n': 0}` — one line for output events. */
export function describeStop(v: StopView): string {
  if (v.kind === 'exit') return `the program exited (${v.exit})`;
  const top = v.frames[0];
  const where = `line ${top.line ?? '?'} in ${top.func}, depth ${v.frames.length - 1}`;
  const locals = `{${Object.entries(top.locals).map(([k, val]) => `'${k}': ${val}`).join(', ')}}`;
  const extra = v.kind === 'return' ? ` (after ${v.returned} returned ${v.value ?? '(an exception)'})` : v.kind === 'event' ? ` [${v.event}${v.value !== undefined ? ` ${v.value}` : ''}]` : '';
  return `${where}${extra}: ${locals}`;
}

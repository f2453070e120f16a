/**
 * DAP's stepping requests made of NDL actions, with the stops DAP clients expect (the ones
 * debugpy makes): a stop is a line, or a function's return shown as the caller at its call
 * line; call and exception events are passed through, as debugpy does.
 *
 *   stepIn    step_into until a line or a return (also one caused by an exception)
 *   next      step_over (step_return from a return) until a line of this frame; once the frame
 *             returns, on as stepIn (debugpy does not stop at the return of a `next`)
 *   stepOut   step_return until this frame's return
 *   continue  continue (no breakpoints) | breakpoint LINE (one breakpoint text) | step_into until a breakpoint line
 *
 * With breakpoints set, next and stepOut walk with step_into, so that a breakpoint inside a
 * call they pass over stops them, as in debugpy. In an inverse session every inverse event is a
 * stop: stepBack is inv_step_over, reverseContinue inv_step_call and stepIn inv_step_into.
 * Decisions are taken on the stop the client is shown (the real run's in oracle mode, else the
 * model's), so in model mode the model's own predictions steer the walk.
 */
import type { ActionWord } from './model_view';
import type { Stepper } from './stepper';
import { depthOf, type StopView } from './view';

export type StepKind = 'stepIn' | 'next' | 'stepOut' | 'continue';
export type InverseKind = 'stepBack' | 'reverseContinue' | 'stepIn';

export interface RequestOutcome {
  reason: 'entry' | 'step' | 'breakpoint' | 'exit' | 'stayed' | 'limit';
  notes: string[];
  /** With 'stayed': steps were taken before the one the model could not answer, so the stop is a new one. */
  moved?: boolean;
}

/**
 * NDL steps one request may take before the adapter gives up. The oracle walks a real run (the
 * tracer keeps at most 10,000 events); a model may never reach the target (a loop it does not
 * leave), and each of its steps is a decode (about 0.3 s on two cores), so a client waiting on
 * `continue` would wait for hours at the oracle's limit.
 */
export const MAX_STEPS_PER_REQUEST = { oracle: 20000, model: 200 } as const;

/** The stop that steers: the real one in oracle mode, else the model's. */
export type ViewOf = (s: Stepper) => StopView;

/** A stop a DAP client is shown: a line, or a return out of a function called from another. */
function isStop(v: StopView): boolean {
  return v.kind === 'line' || v.kind === 'return';
}

function topLine(v: StopView): number | undefined {
  return v.kind === 'exit' ? undefined : v.frames[0].line;
}

/** The first stop: main's line `return CALL` (DAP stops at lines, not at main's call event). */
export async function entry(s: Stepper, view: ViewOf): Promise<RequestOutcome> {
  if (s.direction === 'inverse') return { reason: 'entry', notes: [] };
  return walk(s, view, () => 's', (v) => isStop(v), new Set(), 'entry');
}

export async function forwardRequest(s: Stepper, view: ViewOf, kind: StepKind, breakpoints: Set<number>): Promise<RequestOutcome> {
  const start = view(s);
  const depth = depthOf(start);
  const hasBreaks = breakpoints.size > 0;
  switch (kind) {
    case 'stepIn':
      return walk(s, view, () => 's', isStop, new Set(), 'step');
    case 'next': {
      // Over the frame's lines; once the frame returns (not a stop for `next`), on as stepIn.
      let returned = false;
      return walk(
        s,
        view,
        (v) => (returned || hasBreaks ? 's' : isReturn(v) ? 'r' : 'n'),
        (v) => {
          if (returned) return isStop(v);
          if (v.kind === 'line' && depthOf(v) <= depth) return true;
          if (isReturn(v) && returnDepth(v) <= depth) returned = true;
          return false;
        },
        breakpoints,
        'step',
      );
    }
    case 'stepOut':
      return walk(s, view, () => (hasBreaks ? 's' : 'r'), (v) => v.kind === 'return' && depthOf(v) < depth, breakpoints, 'step');
    case 'continue': {
      const targets = new Set([...breakpoints].map((l) => { const t = s.breakpointTarget(l); return 'target' in t ? t.target : undefined; }));
      if (!hasBreaks) return walk(s, view, () => 'c', () => false, breakpoints, 'breakpoint');
      const one = targets.size === 1 ? [...breakpoints][0] : undefined;
      return walk(s, view, () => (one !== undefined ? 'b' : 's'), () => false, breakpoints, 'breakpoint', one);
    }
  }
}

function isReturn(v: StopView): boolean {
  return v.kind === 'return' || (v.kind === 'event' && v.event === 'return');
}

/** The depth of the frame that returned (a return stop shows its caller, one less). */
function returnDepth(v: StopView): number {
  return v.kind === 'return' ? depthOf(v) + 1 : depthOf(v);
}

/**
 * Takes NDL steps (`next` picks each from the current stop) until `done`, a line on a breakpoint,
 * the program's exit or a step the model could not answer (the walk stays where it got to). The
 * stops in between are not shown.
 */
async function walk(
  s: Stepper,
  view: ViewOf,
  next: (v: StopView) => ActionWord,
  done: (v: StopView) => boolean,
  breakpoints: Set<number>,
  reason: 'entry' | 'step' | 'breakpoint',
  breakLine?: number,
): Promise<RequestOutcome> {
  const notes: string[] = [];
  for (let i = 0; i < s.maxStepsPerRequest; i++) {
    const r = await s.act(next(view(s)), breakLine);
    notes.push(...r.notes);
    if (r.stayed) return { reason: 'stayed', notes, moved: i > 0 };
    const v = view(s);
    if (v.kind === 'exit' || s.finished) return { reason: 'exit', notes };
    if (v.kind === 'line' && breakpoints.has(topLine(v) as number)) return { reason: 'breakpoint', notes };
    if (done(v)) return { reason, notes };
  }
  notes.push(`ndbg: gave up after ${s.maxStepsPerRequest} NDL steps without reaching the request's stop`);
  return { reason: 'limit', notes };
}

/** An inverse session's requests: one inverse action, one stop. */
export async function inverseRequest(s: Stepper, view: ViewOf, kind: InverseKind): Promise<RequestOutcome> {
  const word: ActionWord = kind === 'stepBack' ? 'rn' : kind === 'reverseContinue' ? 'rc' : 'rs';
  const r = await s.act(word);
  if (r.stayed) return { reason: 'stayed', notes: r.notes };
  return { reason: view(s).kind === 'exit' || s.finished ? 'exit' : 'step', notes: r.notes };
}

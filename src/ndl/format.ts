/**
 * The NDL formatter (spec ndl.md §2–§3): trace + state tree + trajectory → document text.
 * `DocumentWriter` builds a document frame by frame so the sampler can measure a token budget
 * as it goes; `formatDocument` is the one-shot form.
 */
import { showsValue, traceContext, type Action, type Direction, type StateNode, type StateTree } from '../debugger';
import type { TraceRecord } from '../trace/types';
import { dumpsEntries, dumpsValue } from './pyjson';
import { actionToken, DOCUMENT_TOKENS as D, eventToken, exitToken, STRUCTURE_TOKENS as S } from './tokens';
import type { Trajectory, TrajectoryStep } from './types';

/** The CONTEXT of a document (§2): code with trailing newlines stripped, plus `main` when forward. */
export function buildContext(trace: Pick<TraceRecord, 'code' | 'entry_call' | 'level'>, direction: Direction): string {
  return traceContext(trace, direction);
}

/** The delta of §3: variables of `cur` that are new or changed vs `prev`, and whether any was left out. */
export function localsDelta(
  prev: Record<string, string>,
  cur: Record<string, string>,
): { elided: boolean; entries: Array<[string, string]> } {
  let elided = false;
  const entries: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(cur)) {
    if (Object.prototype.hasOwnProperty.call(prev, k) && prev[k] === v) elided = true;
    else entries.push([k, v]);
  }
  return { elided, entries };
}

export function formatLocals(elided: boolean, entries: Array<[string, string]>): string {
  return dumpsEntries(elided ? [['..', '..'] as [string, string], ...entries] : entries);
}

/** ACTION text: the action token, plus the target's SRC after `<|breakpoint|>`. */
export function formatAction(action: Action): string {
  if (action.kind === 'breakpoint') {
    if (action.target === undefined) throw new Error('formatAction: breakpoint without a target');
    return actionToken('breakpoint') + action.target;
  }
  return actionToken(action.kind);
}

const STEP_ACTIONS = new Set(['step_into', 'step_over']);

/** Whether the line frame of `cur`, written after `prev` (reached by `action`), is delta-encoded. */
export function writesDelta(
  direction: Direction,
  prev: Pick<StateNode, 'invocation'>,
  action: Action | undefined,
  cur: Pick<StateNode, 'invocation' | 'event'>,
): boolean {
  if (prev.invocation !== cur.invocation) return false;
  if (direction === 'forward') return cur.event === 'line' && action !== undefined && STEP_ACTIONS.has(action.kind);
  return cur.event === 'inv_line' || cur.event === 'inv_line_call';
}

/** The event part of a frame (everything up to and including `<|action_sep|>`). */
export function formatFrameEvent(node: Pick<StateNode, 'event' | 'src'>, localsText: string): string {
  const tok = eventToken(node.event);
  if (node.event === 'line') return `${tok}${S.argSep}${localsText}${S.srcSep}${node.src}${S.actionSep}`;
  return `${tok}${S.srcSep}${node.src}${S.argSep}${localsText}${S.actionSep}`;
}

/** `main`'s call frame as every forward document opens with it (spec §2). */
export const MAIN_CALL_FRAME = formatFrameEvent({ event: 'call', src: 'def main():' }, '{}');

/**
 * A new document holding `context` (the program) and one state, for a document that has
 * outgrown the model's context. Training documents never exceed it, so such a document is not
 * cut from the left (that would lose the program and break the delta chain); the state is
 * written the way training documents write it after a jump: forward, main's call frame and a
 * breakpoint jump to a line stop (a jump's frame shows full locals), or a step into any other
 * stop; inverse, the stop as the first frame. The text ends with the stop's `<|action_sep|>`.
 */
export function anchoredDocument(
  context: string,
  direction: Direction,
  stop: { event: StateNode['event']; src: string; locals?: Record<string, string>; value?: string | null },
): string {
  const arg = showsValue(stop.event) ? dumpsValue(stop.value ?? null) : dumpsEntries(Object.entries(stop.locals ?? {}));
  let first = '';
  if (direction === 'forward') {
    const jump: Action = stop.event === 'line' ? { kind: 'breakpoint', target: stop.src } : { kind: 'step_into' };
    first = MAIN_CALL_FRAME + formatAction(jump) + S.frameSep;
  }
  return D.begin + S.traceContextStart + context + S.frameSep + first + formatFrameEvent(stop, arg);
}

/** Builds one document incrementally; the text so far plus `closing()` is always a valid document. */
export class DocumentWriter {
  private parts: string[] = [];
  private prev: { node: StateNode; action?: Action } | undefined;
  private frames = 0;

  constructor(
    readonly trace: Pick<TraceRecord, 'code' | 'entry_call' | 'level'>,
    readonly tree: StateTree,
  ) {
    this.parts.push(D.begin + S.traceContextStart + buildContext(trace, tree.direction));
  }

  /** The frame text for `step` as it would be appended next (without the leading `<|frame_sep|>`). */
  frameText(step: TrajectoryStep): string {
    return this.frameTextWithPrev(this.prev, step);
  }

  /** The frame text `step` would get if it followed `prevStep` (the sampler's look-ahead). */
  frameTextAfter(prevStep: TrajectoryStep, step: TrajectoryStep): string {
    return this.frameTextWithPrev({ node: this.node(prevStep.node), action: prevStep.action }, step);
  }

  private node(i: number): StateNode {
    const node = this.tree.nodes[i];
    if (node === undefined) throw new Error(`DocumentWriter: node ${i} not in the tree`);
    return node;
  }

  private frameTextWithPrev(prev: { node: StateNode; action?: Action } | undefined, step: TrajectoryStep): string {
    const node = this.node(step.node);
    let arg: string;
    if (showsValue(node.event)) arg = dumpsValue(node.value);
    else if (prev && writesDelta(this.tree.direction, prev.node, prev.action, node)) {
      const d = localsDelta(prev.node.locals, node.locals);
      arg = formatLocals(d.elided, d.entries);
    } else arg = dumpsEntries(Object.entries(node.locals));
    return formatFrameEvent(node, arg) + (step.action ? formatAction(step.action) : '');
  }

  /** Appends a frame; returns the appended text (with its `<|frame_sep|>`). */
  push(step: TrajectoryStep): string {
    if (this.prev && this.prev.action === undefined) throw new Error('DocumentWriter: a frame without action must be last');
    const text = S.frameSep + this.frameText(step);
    this.parts.push(text);
    this.prev = { node: this.node(step.node), action: step.action };
    this.frames++;
    return text;
  }

  get frameCount(): number {
    return this.frames;
  }

  /** The tail that closes the document: EXIT when the last action leaves the tree. */
  closing(end: Trajectory['end']): string {
    const exit = end === 'exit' ? S.frameSep + exitToken(this.tree.exitKind) : '';
    return exit + S.traceEnd + D.end;
  }

  finish(end: Trajectory['end']): string {
    if (end === 'exit' && this.prev?.action === undefined) throw new Error('DocumentWriter: exit after a frame without action');
    return this.parts.join('') + this.closing(end);
  }

  /** The text written so far. */
  text(): string {
    return this.parts.join('');
  }
}

/**
 * The document of `trajectory` through `tree` (built from `trace`). The caller guarantees the
 * trajectory follows the tree (the sampler does; see test/ndl/oracle.test.ts).
 */
export function formatDocument(trace: Pick<TraceRecord, 'code' | 'entry_call' | 'level'>, tree: StateTree, trajectory: Trajectory): string {
  if (trajectory.direction !== tree.direction) throw new Error('formatDocument: trajectory and tree directions differ');
  if (trajectory.steps.length === 0) throw new Error('formatDocument: empty trajectory');
  const w = new DocumentWriter(trace, tree);
  for (const step of trajectory.steps) w.push(step);
  return w.finish(trajectory.end);
}

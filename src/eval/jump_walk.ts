/**
 * Walked jumps: an action that skips over many events answered by chaining the model's own
 * single steps. Asked for a breakpoint in one answer, a small model must carry the program's
 * state across every event it skips and write the full locals where it stops; on the validation
 * split it did so for 14 of 47 breakpoints whose stop was the very next event, where a single
 * step_into is right 73% of the time (docs/eval.md, "Decoding: walked breakpoints"). So after the
 * model's one-shot answer, a walk restarts from the prompt with the action replaced by step_into
 * (inv_step_into), appends each answer to the document, and stops where the jump would stop: for
 * a breakpoint the first line event at the target (at any depth); for step_over and
 * inv_step_over the first event back at the starting depth; for step_return and inv_step_call
 * the function's return or call frame. The stop is then written as the jump's own answer would
 * be (spec §3: full locals after a breakpoint, a delta against the starting frame after a
 * step_over). The model completer walks breakpoints (WALKED_ACTIONS): walking the other four was
 * measured and did not help.
 *
 * A walk that reaches the end of the program answers with that exit. A walk that outgrows the
 * model's context goes on from a new document holding the program and its latest stop
 * (format.ts anchoredDocument, as a REPL session does). The model's one-shot answer stands where
 * a walk cannot answer: a step does not parse, a stop's locals are not known exactly, the model
 * goes round a loop it cannot leave, or the walk runs past `maxSteps`. Nothing but the model's
 * own text decides.
 */
import { showsValue, type Action, type ActionKind, type Direction } from '../debugger';
import { anchoredDocument, formatAction, formatFrameEvent, formatLocals, localsDelta, writesDelta } from '../ndl/format';
import { parseDocument } from '../ndl/parse';
import { dumpsEntries, dumpsValue } from '../ndl/pyjson';
import { actionToken, STRUCTURE_TOKENS as S } from '../ndl/tokens';
import type { ParsedFrame } from '../ndl/types';
import { fitsPrompt, type PromptBudget } from './budget';
import { readPrediction } from './completer';
import { ProgramCalls } from './program_calls';

/** The actions answered by walking, by default (each measured on the validation split, docs/eval.md). */
export const WALKED_ACTIONS: readonly ActionKind[] = ['breakpoint'];

/** Most single steps one walk takes before its one-shot answer stands. */
export const DEFAULT_WALK_STEPS = 16;

/**
 * A walk that reaches the same state this many times has the model going round a loop it
 * cannot leave (a program may repeat a state a few times, e.g. a loop over equal items, so
 * not at the second); it gives up instead of spending its remaining steps.
 */
const LOOP_REPEATS = 4;

export interface JumpWalkOptions {
  actions: readonly ActionKind[];
  maxSteps: number;
  /** Tokens kept free after a walk's prompt for the next step's answer. */
  answerRoom: number;
}

/** Decodes one answer per prompt, in order (a model's batched decoding). */
export type FrameDecoder = (prompts: string[]) => Promise<string[]>;

/** A frame of the walk as a node of the state tree: its invocation counted from the starting frame's (0). */
interface WalkNode {
  event: ParsedFrame['event'];
  src: string;
  invocation: number;
  frame: ParsedFrame;
}

class Walk {
  prompt: string;
  steps = 0;
  /** Call depth relative to the starting frame, and the invocations above it (innermost last). */
  private depth = 0;
  private stack: number[] = [0];
  private nextInvocation = 1;
  private previous: WalkNode;
  /** How often each state (depth, event, line, locals or value) was reached (LOOP_REPEATS). */
  private seen = new Map<string, number>();
  /** Per invocation on the stack, its latest frame with LOCALS when those are known exactly. */
  private known: Array<ParsedFrame | undefined>;

  /** For a forward breakpoint: which lines may run the target's code (program_calls.ts). */
  private readonly calls: ProgramCalls | undefined;

  constructor(
    private readonly action: Action,
    private readonly direction: Direction,
    private readonly context: string,
    private readonly origin: WalkNode,
    prompt: string,
  ) {
    this.prompt = prompt;
    this.previous = origin;
    this.known = [origin.frame.exact && origin.frame.locals ? origin.frame : undefined];
    this.calls = direction === 'forward' && action.kind === 'breakpoint' ? new ProgramCalls(context) : undefined;
  }

  /**
   * The next step's action: step_into, or step_over from a line whose calls cannot run the
   * breakpoint's line (each event skipped is one fewer of the model's steps to get wrong).
   */
  get stepText(): string {
    if (this.direction === 'inverse') return formatAction({ kind: 'inv_step_into' });
    const from = this.previous;
    const over = this.calls !== undefined && from.event === 'line' && this.calls.canStepOver(from.src, this.action.target ?? '');
    return formatAction({ kind: over ? 'step_over' : 'step_into' });
  }

  /**
   * Takes the next step's answer: the jump's answer text when the walk has arrived, 'continue'
   * when it goes on, or undefined when it cannot answer (the one-shot answer stands).
   */
  advance(answer: string): string | 'continue' | undefined {
    this.steps++;
    const prediction = readPrediction(this.prompt, answer);
    if (prediction.error !== undefined) return undefined;
    if (prediction.exit !== undefined) return answer;
    const node = this.enter(prediction.frame as ParsedFrame);
    const frame = node.frame;
    if (this.looping(frame)) return undefined;
    // step_return and inv_step_call stop inside the starting invocation; a walk that left it went wrong.
    if (this.depth < 0 && (this.action.kind === 'step_return' || this.action.kind === 'inv_step_call')) return undefined;
    if (this.arrived(node)) {
      // One step is already the jump's answer, except that a breakpoint's shows the full locals.
      if (this.steps === 1 && this.action.kind !== 'breakpoint') return answer;
      return this.answerFor(node);
    }
    const end = answer.indexOf(S.actionSep);
    if (end < 0) return undefined;
    this.previous = node;
    this.prompt += answer.slice(0, end + S.actionSep.length) + this.stepText;
    return 'continue';
  }

  /**
   * Restarts the walk's document from the program and its latest stop with full locals
   * (format.ts anchoredDocument, as a REPL session does) when it outgrows the context; false
   * when that stop's locals are not known exactly.
   */
  reanchor(): boolean {
    const f = this.previous.frame;
    if (!showsValue(f.event) && (!f.locals || !f.exact)) return false;
    this.prompt = anchoredDocument(this.context, this.direction, f) + this.stepText;
    return true;
  }

  /**
   * A walked line's delta is resolved against its invocation's latest known locals, not only
   * the frame just before it as the parser does: after an exception frame the delta's base is
   * the locals at the exception, which no frame shows, but the exception was raised while the
   * invocation's latest line ran (or a call from it did), so they are that line's locals.
   */
  private resolve(frame: ParsedFrame, base: ParsedFrame | undefined): ParsedFrame {
    if (!frame.elided || !base?.locals || showsValue(frame.event)) return frame;
    return { ...frame, locals: { ...base.locals, ...Object.fromEntries(frame.shown ?? []) }, exact: true };
  }

  private looping(frame: ParsedFrame): boolean {
    const key = JSON.stringify([this.depth, frame.event, frame.src, frame.locals ?? null, frame.value ?? null]);
    const count = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, count);
    return count >= LOOP_REPEATS;
  }

  /** Moves the depth and invocation along for one more frame (a call enters, the frame after a return leaves). */
  private enter(raw: ParsedFrame): WalkNode {
    const leaves = this.direction === 'forward' ? this.previous.event === 'return' : this.previous.event === 'inv_call';
    const enters = this.direction === 'forward' ? raw.event === 'call' : raw.event === 'inv_return';
    if (leaves) {
      this.depth--;
      this.stack.pop();
      this.known.pop();
      // Back above the starting frame: a caller the walk never saw enter, so a new invocation.
      if (this.stack.length === 0) {
        this.stack.push(this.nextInvocation++);
        this.known.push(undefined);
      }
    }
    if (enters) {
      this.depth++;
      this.stack.push(this.nextInvocation++);
      this.known.push(undefined);
    }
    const top = this.stack.length - 1;
    const frame = this.resolve(raw, this.known[top]);
    if (frame.locals) this.known[top] = frame.exact ? frame : undefined;
    return { event: frame.event, src: frame.src, invocation: this.stack[top], frame };
  }

  private arrived(node: WalkNode): boolean {
    switch (this.action.kind) {
      case 'breakpoint':
        return node.event === 'line' && node.src === this.action.target;
      case 'step_over':
      case 'inv_step_over':
        return this.depth <= 0;
      case 'step_return':
        return this.depth === 0 && node.event === 'return';
      case 'inv_step_call':
        return this.depth === 0 && node.event === 'inv_call';
      default:
        return false;
    }
  }

  /** The stop written as the jump's answer (spec §3); undefined when its locals are not known exactly. */
  private answerFor(node: WalkNode): string | undefined {
    const f = node.frame;
    let arg: string;
    if (showsValue(f.event)) arg = dumpsValue(f.value ?? null);
    else {
      if (!f.locals || !f.exact) return undefined;
      if (writesDelta(this.direction, this.origin, this.action, node)) {
        const base = this.origin.frame;
        if (!base.locals || !base.exact) return undefined;
        const d = localsDelta(base.locals, f.locals);
        arg = formatLocals(d.elided, d.entries);
      } else arg = dumpsEntries(Object.entries(f.locals));
    }
    return S.frameSep + formatFrameEvent(f, arg);
  }
}

/** A walk for the prompt's jump, or undefined when its action is not walked. */
function startWalk(prefix: string, options: JumpWalkOptions): Walk | undefined {
  // Every answer the model gives passes here; only a prompt ending in a walked action is parsed.
  const lastAction = prefix.slice(prefix.lastIndexOf(S.actionSep) + S.actionSep.length);
  if (!options.actions.some((kind) => lastAction.startsWith(actionToken(kind)))) return undefined;
  const doc = parseDocument(prefix);
  const last = doc.frames[doc.frames.length - 1];
  const action = last?.action;
  if (doc.error || !doc.direction || !action || !options.actions.includes(action.kind)) return undefined;
  // From a return, step_return is the caller's next event: one step, the one-shot answer.
  if (action.kind === 'step_return' && last.event === 'return') return undefined;
  const actionText = formatAction(action);
  if (!prefix.endsWith(actionText)) return undefined;
  const origin: WalkNode = { event: last.event, src: last.src, invocation: 0, frame: last };
  const walk = new Walk(action, doc.direction, doc.context, origin, prefix.slice(0, prefix.length - actionText.length));
  walk.prompt += walk.stepText;
  return walk;
}

/**
 * The answers to `prefixes` with their jumps walked: `oneShot` holds the model's direct answers,
 * `decode` answers the walks' prompts (all live walks of a round in one batch).
 */
export async function walkJumps(
  prefixes: readonly string[],
  oneShot: readonly string[],
  decode: FrameDecoder,
  budget: PromptBudget,
  options: JumpWalkOptions,
): Promise<string[]> {
  const walked = await walkedAnswers(prefixes, decode, budget, options);
  return walked.map((answer, i) => answer ?? oneShot[i]);
}

/**
 * Each prefix's walked answer, or undefined where its action is not walked or its walk cannot
 * answer (the one-shot answer stands there): a caller decodes the one-shot answers of those
 * alone, not of every walked jump.
 */
export async function walkedAnswers(
  prefixes: readonly string[],
  decode: FrameDecoder,
  budget: PromptBudget,
  options: JumpWalkOptions,
): Promise<Array<string | undefined>> {
  const answers: Array<string | undefined> = new Array(prefixes.length).fill(undefined);
  let live = prefixes
    .map((prefix, i) => ({ i, walk: startWalk(prefix, options) }))
    .filter((w): w is { i: number; walk: Walk } => w.walk !== undefined);
  while (live.length > 0) {
    const fits = (w: Walk) => fitsPrompt(budget, w.prompt, options.answerRoom);
    live = live.filter((w) => w.walk.steps < options.maxSteps && (fits(w.walk) || (w.walk.reanchor() && fits(w.walk))));
    if (live.length === 0) break;
    const texts = await decode(live.map((w) => w.walk.prompt));
    const next: typeof live = [];
    live.forEach((w, k) => {
      const r = w.walk.advance(texts[k]);
      if (r === 'continue') next.push(w);
      else if (r !== undefined) answers[w.i] = r;
    });
    live = next;
  }
  return answers;
}

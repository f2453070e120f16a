/**
 * One NDL action at a time, for the adapter: it runs the action through the `ndbg debug`
 * session engine (the model's prediction, re-anchoring, unreadable output), walks the real run
 * along with the same action when there is one, and keeps both sides as DAP stops. The adapter
 * composes DAP requests out of these steps (requests.ts).
 */
import { buildForwardTree, buildInverseTree, nextNode, type Action, type Direction } from '../debugger';
import { EXIT, type StateTree } from '../debugger/types';
import { parseDocument } from '../ndl/parse';
import { DebugSession, type DebugSessionOptions } from '../eval/session';
import { ActionWord, ModelStack } from './model_view';
import { RealStacks } from './real_view';
import type { StopView } from './view';

/**
 * The session's own options (the real run serves oracle mode, verify and inverse launches); the
 * label is required here, and a request's walk ends after maxStepsPerRequest NDL steps.
 */
export type StepperOptions = DebugSessionOptions & { label: string; maxStepsPerRequest: number };

const ACTION_KIND: Record<ActionWord, Action['kind']> = {
  s: 'step_into',
  n: 'step_over',
  r: 'step_return',
  c: 'continue',
  b: 'breakpoint',
  rs: 'inv_step_into',
  rn: 'inv_step_over',
  rc: 'inv_step_call',
};

export interface StepResult {
  /** The session's own notes (re-anchoring, unreadable output), for output events. */
  notes: string[];
  /** The action was not taken (the model's output could not be read and there is no real state to go on from): the stop is the one before. */
  stayed: boolean;
}

export class Stepper {
  readonly session: DebugSession;
  /** Every command run so far, e.g. `s`, `b 4`: replaying them rebuilds this state exactly. */
  readonly commands: string[] = [];
  private readonly tree: StateTree | undefined;
  private readonly real: RealStacks | undefined;
  private realNode = EXIT;
  private readonly stack: ModelStack;
  private exitView: StopView | undefined;

  constructor(private readonly options: StepperOptions) {
    this.session = new DebugSession({ ...options, label: options.label });
    if (options.trace) {
      this.tree = options.direction === 'forward' ? buildForwardTree(options.trace) : buildInverseTree(options.trace);
      this.real = new RealStacks(options.trace, this.tree);
      this.realNode = 0;
    }
    const doc = parseDocument(this.session.document);
    const first = doc.frames[doc.frames.length - 1];
    this.stack = new ModelStack(this.session.source, options.direction, first, this.tree?.nodes[0].line);
  }

  /** NDL steps one DAP request may take before the adapter answers with what it has. */
  get maxStepsPerRequest(): number {
    return this.options.maxStepsPerRequest;
  }

  get direction(): Direction {
    return this.options.direction;
  }

  /** True once the model said the program exited. */
  get finished(): boolean {
    return this.exitView !== undefined;
  }

  /** The model's stop (in oracle mode the same as the real one). */
  modelView(): StopView {
    return this.exitView ?? this.stack.view();
  }

  /** The real run's stop reached by the same actions; undefined without a trace. */
  realView(): StopView | undefined {
    return this.real?.view(this.realNode);
  }

  /** The SRC text a breakpoint on `line` targets, or why there is none. */
  breakpointTarget(line: number): { target: string; line: number } | { error: string } {
    return this.session.source.breakpointTarget(String(line));
  }

  async act(word: ActionWord, line?: number): Promise<StepResult> {
    const command = word === 'b' ? `b ${line}` : word;
    this.commands.push(command);
    const before = this.session.document;
    const r = await this.session.execute(command);
    const notes = r.output.filter((l) => l.startsWith('***') || l.startsWith('    raw:') || l.startsWith('    continuing'));
    // The session refused the command or could not read the model and had nothing to go on from:
    // it stays at its stop, and so does the real run.
    if (this.session.document === before) return { notes: notes.length > 0 ? notes : r.output, stayed: true };
    if (this.tree && this.realNode !== EXIT) {
      const target = word === 'b' ? this.breakpointTarget(line as number) : undefined;
      const action: Action = { kind: ACTION_KIND[word], ...(target && 'target' in target ? { target: target.target } : {}) };
      this.realNode = nextNode(this.tree, this.realNode, action);
    }
    const doc = parseDocument(this.session.document);
    if (doc.exit !== undefined) this.exitView = { kind: 'exit', exit: doc.exit };
    else this.stack.advance(word, doc.frames[doc.frames.length - 1]);
    return { notes, stayed: false };
  }
}

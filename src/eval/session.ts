// Over 300 lines on purpose: one session's state machine (commands, the model's and the real
// program's positions, re-anchoring) reads as one piece; its views and sources are split out.
/**
 * The engine of `ndbg debug`: a pdb-like session in which a model (any TextCompleter) predicts
 * each next state. It has no I/O of its own: `start()` and `execute(line)` return the lines to
 * print, so scripted sessions are tested without a terminal.
 *
 * The model runs as a neural debugger does: its own predictions become the document prefix it
 * continues, right or wrong. With `verify`, the session also walks the oracle's tree of the
 * real run with the same actions and prints the real state beside each prediction. The real
 * run is never fed to the model, with one exception: when the model writes text that does not
 * parse, a verifying session continues from the real frame; a non-verifying one stays at its
 * stop without taking the action, so that another action (or a sampled retry) can go on.
 */
import { buildForwardTree, buildInverseTree, nextNode, showsValue, type Direction } from '../debugger';
import { Action, EXIT, StateTree } from '../debugger/types';
import { anchoredDocument, buildContext, DocumentWriter, formatAction, formatFrameEvent, MAIN_CALL_FRAME } from '../ndl/format';
import { parseDocument } from '../ndl/parse';
import { dumpsEntries, dumpsValue } from '../ndl/pyjson';
import { ActionKind, DOCUMENT_TOKENS, exitToken, STRUCTURE_TOKENS as S } from '../ndl/tokens';
import type { TrajectoryStep } from '../ndl/types';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { fitsPrompt, nextFrameRoom } from './budget';
import { readPrediction, TextCompleter } from './completer';
import { Location, ProgramSource, rebuildCall } from './session_source';
import type { PredictOptions } from './types';
import { compareStops, describeModel, describeReal, formatLocals, mark, ModelStop, REAL_STOP_MARK, RealStop } from './session_view';

export interface DebugSessionOptions {
  /** The program's code (CruxEval style: functions, no call). */
  code: string;
  /** The entry call, e.g. `f(3)`. */
  call: string;
  completer: TextCompleter;
  /** The real run; required for inverse sessions (the first frame is the real return) and for `verify`. */
  trace?: TraceRecord;
  direction: Direction;
  /** Show the real state beside each prediction. */
  verify: boolean;
  /** Sampling for the completer; greedy when absent. The seed is offset by the step number. */
  sampling?: PredictOptions;
  /** How the banner names the model (default: the completer's name), e.g. the checkpoint path. */
  label?: string;
}

export interface CommandResult {
  output: string[];
  /** The user asked to quit. */
  quit: boolean;
}

type Step = { kind: 'action'; action: Action; breakLine?: number } | { kind: 'error'; message: string };

const FORWARD_COMMANDS: Record<string, ActionKind> = {
  s: 'step_into',
  step: 'step_into',
  n: 'step_over',
  next: 'step_over',
  r: 'step_return',
  return: 'step_return',
  b: 'breakpoint',
  break: 'breakpoint',
  tbreak: 'breakpoint',
  c: 'continue',
  cont: 'continue',
  continue: 'continue',
};
const INVERSE_COMMANDS: Record<string, ActionKind> = { rs: 'inv_step_into', rn: 'inv_step_over', rc: 'inv_step_call' };

export const HELP_TEXT = [
  'Forward (default):  s / step     step_into: the next event, entering calls',
  '                    n / next     step_over: the next event in this function or its caller',
  '                    r / return   step_return: to this function\'s return (at a return: back in the caller)',
  '                    b LINE       breakpoint: run to the next time line LINE runs (tbreak + continue)',
  '                    b SRC TEXT   the same, naming the line by its text, e.g. "b return n"',
  '                    c / continue run to the end',
  'Inverse (--inverse): rs         inv_step_into: one event back, entering calls',
  '                    rn           inv_step_over: one event back in this function',
  '                    rc           inv_step_call: back to this function\'s call (its arguments)',
  'Any session:        l / list     the source; -> marks the model\'s line (R> the real one)',
  '                    p / locals   the predicted locals; p NAME one variable',
  '                    h / help     this text',
  '                    q / quit     leave',
  'An empty line repeats the last command. Every stop shows the MODEL\'s prediction;',
  'with --verify the real state follows: [=] same, [≠ evt, src, locals, value, exit] differs,',
  '[real: not the model\'s] the model\'s output did not parse and the session went on from the real state.',
];

export class DebugSession {
  readonly direction: Direction;
  readonly source: ProgramSource;
  private readonly completer: TextCompleter;
  private readonly sampling: PredictOptions | undefined;
  private readonly label: string;
  private readonly verify: boolean;
  private readonly trace: TraceRecord | undefined;
  private readonly tree: StateTree | undefined;
  private readonly writer: DocumentWriter | undefined;
  /** The model's document so far, ending with the current frame's `<|action_sep|>`. */
  private text: string;
  private stop: ModelStop;
  private where: Location = { func: '?' };
  /** The real node (EXIT when the real run is over) and the step that reached it. */
  private realNode = EXIT;
  private realPrev: TrajectoryStep | undefined;
  /** The model said the program exited: no more steps are possible. */
  private ended: 'exit' | undefined;
  private lastCommand = '';
  private steps = 0;

  constructor(options: DebugSessionOptions) {
    this.direction = options.direction;
    this.completer = options.completer;
    this.sampling = options.sampling;
    this.label = options.label ?? options.completer.name;
    this.verify = options.verify;
    this.trace = options.trace;
    const program = { code: options.code, entry_call: options.call };
    this.source = new ProgramSource(buildContext(program, this.direction));
    if ((this.verify || this.direction === 'inverse') && !this.trace) {
      throw new UserError(`a${this.direction === 'inverse' ? 'n inverse' : ' verifying'} session needs the real run (a trace)`);
    }
    if (this.trace) {
      if (this.trace.code !== options.code || this.trace.entry_call !== options.call) {
        throw new Error('DebugSession: the trace is of another program or call');
      }
      this.tree = this.direction === 'forward' ? buildForwardTree(this.trace) : buildInverseTree(this.trace);
      if (this.tree.nodes.length === 0) {
        throw new UserError(`the real run never entered ${options.call.replace(/\(.*$/s, '')}: nothing to debug backwards${this.trace.error ? ` (${this.trace.error})` : ''}`);
      }
      this.writer = new DocumentWriter(this.trace, this.tree);
      this.realNode = 0;
    }
    // Forward: main's call frame, which needs no run. Inverse: the entry's real return (or last) frame.
    const first = this.writer ? this.writer.frameText({ node: 0 }) : MAIN_CALL_FRAME;
    this.text = DOCUMENT_TOKENS.begin + S.traceContextStart + this.source.context + S.frameSep + first;
    const parsed = parseDocument(this.text);
    if (parsed.error || parsed.frames.length !== 1) throw new Error(`DebugSession: the first frame does not parse: ${parsed.error}`);
    this.stop = { frame: parsed.frames[0] };
  }

  /** The model's document so far (for inspection and tests). */
  get document(): string {
    return this.text;
  }

  /** True once the model's program has exited. */
  get finished(): boolean {
    return this.ended !== undefined;
  }

  /** The banner and the first stop. */
  start(): string[] {
    const what = this.direction === 'forward' ? 'forward session' : 'inverse session (stepping backwards from the return)';
    const check = this.verify ? ', checked against the real run' : '';
    return [`ndbg debug: ${this.source.lines.length} lines, ${this.direction === 'forward' ? 'main calls' : 'entry call'} ${this.entryCall()}; ${what}, model: ${this.label}${check}. h for help.`, ...this.showStop(true)];
  }

  private entryCall(): string {
    return this.trace?.entry_call ?? this.source.lines[this.source.lines.length - 1].replace(/^\s*return\s+/, '');
  }

  /** Runs one command line; never throws on bad input (errors are `*** ` lines). */
  async execute(line: string): Promise<CommandResult> {
    let input = line.trim();
    if (input === '') {
      if (this.lastCommand === '') return { output: [], quit: false };
      input = this.lastCommand;
    }
    this.lastCommand = input;
    const m = /^(\S+)\s*(.*)$/s.exec(input) as RegExpExecArray;
    const word = m[1];
    const rest = m[2];
    switch (word) {
      case 'q':
      case 'quit':
      case 'exit':
        return { output: [], quit: true };
      case 'h':
      case 'help':
        return { output: [...HELP_TEXT], quit: false };
      case 'l':
      case 'list':
      case 'll':
        return { output: this.source.listing(this.where.line, this.realLocation()), quit: false };
      case 'p':
      case 'locals':
        return { output: this.printLocals(rest.trim()), quit: false };
    }
    const step = this.parseStep(word, rest);
    if (step.kind === 'error') return { output: [`*** ${step.message}`], quit: false };
    return { output: await this.take(step.action, step.breakLine), quit: false };
  }

  private parseStep(word: string, rest: string): Step {
    const fwd = FORWARD_COMMANDS[word];
    const inv = INVERSE_COMMANDS[word];
    if (!fwd && !inv) return { kind: 'error', message: `Unknown command "${word}"; h lists the commands` };
    if (fwd && this.direction === 'inverse') {
      return { kind: 'error', message: `"${word}" (${fwd}) is a forward command; this is an inverse session: use rs, rn or rc` };
    }
    if (inv && this.direction === 'forward') {
      return { kind: 'error', message: `"${word}" (${inv}) is an inverse command; start the session with --inverse to step backwards` };
    }
    if (this.ended === 'exit') return { kind: 'error', message: 'The program has exited; there is nothing to step (l, p, h still work; q quits)' };
    const kind = (fwd ?? inv) as ActionKind;
    if (kind !== 'breakpoint') {
      if (rest.trim() !== '') return { kind: 'error', message: `"${word}" takes no argument` };
      return { kind: 'action', action: { kind } };
    }
    const target = this.source.breakpointTarget(rest);
    if ('error' in target) return { kind: 'error', message: target.error };
    return { kind: 'action', action: { kind, target: target.target }, breakLine: target.line };
  }

  /** Takes an action: asks the model, moves the real run along, prints the new stop. */
  private async take(action: Action, breakLine: number | undefined): Promise<string[]> {
    const out: string[] = [];
    if (breakLine !== undefined) out.push(`Breakpoint at line ${breakLine}: ${(action.target ?? '').trim()}`);
    if (!this.fitsContext(this.text + formatAction(action))) out.push(...this.reanchor());
    const prefix = this.text + formatAction(action);
    const options = this.sampling && { ...this.sampling, seed: (this.sampling.seed ?? 0) + this.steps };
    this.steps++;
    const continuation = await this.completer.completeFrame(prefix, options);
    const prediction = readPrediction(prefix, continuation);
    if (prediction.error !== undefined) {
      // With the frame grammar an answer fails to parse only when it was cut off.
      const cut = /at end of text$/.test(prediction.error) ? ' (the answer stopped before its frame ended: raise --max-new-tokens)' : '';
      out.push(`*** The model's output does not parse: ${prediction.error}${cut}`);
      out.push(`    raw: ${JSON.stringify(continuation)}`);
    }
    if (prediction.error !== undefined && !this.verify) {
      // No state to go on from: the action is not taken, and the model and real positions stay.
      out.push(`*** The session stays at its stop (the action was not taken): try another action${this.sampling ? ' or the same one again (a new sample)' : ''}; q quits`);
      return out;
    }
    const prevReal = this.realNode;
    const prevMatched = this.verify ? compareStops(this.stop, this.realStop()).length === 0 : false;
    if (this.tree && this.realNode !== EXIT) {
      this.realPrev = { node: this.realNode, action };
      this.realNode = nextNode(this.tree, this.realNode, action);
    }
    if (prediction.error !== undefined) {
      out.push('    continuing from the real state');
      this.text = prefix + this.realFrameText(prevReal, prevMatched);
      this.stop = this.realAsModel();
      if (this.stop.exit !== undefined) this.ended = 'exit';
      out.push(...this.showStop(false, true));
      return out;
    }
    if (prediction.exit !== undefined) {
      this.text = prefix + S.frameSep + exitToken(prediction.exit);
      this.stop = { exit: prediction.exit };
      this.ended = 'exit';
    } else {
      const sep = continuation.indexOf(S.actionSep);
      this.text = prefix + (sep >= 0 ? continuation.slice(0, sep + S.actionSep.length) : continuation + S.actionSep);
      this.stop = { frame: prediction.frame };
    }
    out.push(...this.showStop(false));
    return out;
  }

  /** Whether a prompt leaves room in the model's context for the longest frame we expect back. */
  private fitsContext(prompt: string): boolean {
    const budget = this.completer.budget;
    return !budget || fitsPrompt(budget, prompt, sessionAnswerRoom(budget));
  }

  /**
   * The session has outgrown the model's context. Training documents never exceed it, so the
   * session does not cut the document from the left (that would lose the program and break the
   * delta chain); it starts a new document of a kind the model was trained on, holding the
   * program and the current state with full locals: forward, main's call frame and a breakpoint
   * jump to the current line (a jump's frame always shows full locals); for a call, return or
   * exception stop, main's call and the stop itself; inverse, the stop as the first frame.
   */
  private reanchor(): string[] {
    const before = this.completer.budget?.countTokens(this.text) ?? 0;
    const frame = this.stop.frame;
    if (!frame) return [];
    this.text = anchoredDocument(this.source.context, this.direction, frame);
    return [`*** The session outgrew the model's context (${before} tokens): continuing from a new document with the program and this state (full locals)`];
  }

  /**
   * The real frame's text to continue the model's document with after unreadable output: as the
   * real document writes it (a delta) when the model's previous state was right, else with the
   * full locals, so the document's state is exactly the real one either way.
   */
  private realFrameText(prevReal: number, prevMatched: boolean): string {
    const tree = this.tree as StateTree;
    if (this.realNode === EXIT) return S.frameSep + exitToken(tree.exitKind);
    const writer = this.writer as DocumentWriter;
    if (prevMatched && prevReal !== EXIT && this.realPrev) return S.frameSep + writer.frameTextAfter(this.realPrev, { node: this.realNode });
    const node = tree.nodes[this.realNode];
    const arg = showsValue(node.event) ? dumpsValue(node.value) : dumpsEntries(Object.entries(node.locals));
    return S.frameSep + formatFrameEvent(node, arg);
  }

  /** The real state read back the way the model's output is (for continuing from it). */
  private realAsModel(): ModelStop {
    const tree = this.tree as StateTree;
    if (this.realNode === EXIT) return { exit: tree.exitKind };
    const sep = this.text.lastIndexOf(S.frameSep);
    const r = readPrediction(this.text.slice(0, sep), this.text.slice(sep));
    if (r.frame === undefined) throw new Error(`DebugSession: the real frame does not parse: ${r.error ?? 'exit'}`);
    return { frame: r.frame };
  }

  private realStop(): RealStop {
    const tree = this.tree as StateTree;
    if (this.realNode === EXIT) return { exit: tree.exitKind };
    const node = tree.nodes[this.realNode];
    return { node, func: this.trace?.events[node.traceIndex]?.func ?? '?' };
  }

  private realLocation(): number | undefined {
    if (!this.verify || this.realNode === EXIT) return undefined;
    return (this.tree as StateTree).nodes[this.realNode].line;
  }

  /**
   * The stop line(s): the model's state, then with --verify its mark and the real state if
   * different. A stop taken from the real run (the model's output did not parse) is marked as
   * such, never [=]: it is not the model's.
   */
  private showStop(first: boolean, fromReal = false): string[] {
    const stop = this.stop;
    if (stop.frame) {
      const isCall = stop.frame.event === 'call' || stop.frame.event === 'inv_call';
      const known = first && this.tree ? this.tree.nodes[0].line : undefined;
      this.where = this.source.locate(stop.frame.src, isCall, this.where, this.direction === 'inverse', known);
    }
    const head = stop.exit !== undefined ? describeModel(stop, this.where) : `> ${describeModel(stop, this.where)}`;
    const out: string[] = [];
    if (!this.verify) out.push(head);
    else {
      const real = this.realStop();
      const diff = compareStops(stop, real);
      out.push(`${head}   ${fromReal ? REAL_STOP_MARK : mark(diff)}`);
      if (diff.length > 0) out.push(`  real: ${real.exit !== undefined ? '' : '> '}${describeReal(real)}`);
    }
    if (!first && stop.frame?.event === 'inv_call' && stop.frame.locals) {
      const call = rebuildCall(stop.frame.src, stop.frame.locals);
      if (call) out.push(`  call: ${call}`);
    }
    return out;
  }

  private printLocals(name: string): string[] {
    const stop = this.stop;
    if (stop.exit !== undefined) return ['*** The program has exited; there are no locals'];
    const f = stop.frame;
    const real = this.verify ? this.realStop() : undefined;
    const realNode = real?.node;
    if (name !== '') {
      if (!/^[A-Za-z_]\w*$/.test(name)) return [`*** p shows a variable of the predicted state (p NAME); "${name}" is not a name`];
      const v = f.locals?.[name];
      const out = [v === undefined ? `*** NameError: "${name}" is not in the predicted locals` : `${name} = ${v}`];
      if (realNode) {
        const rv = realNode.locals[name];
        out.push(`  real: ${rv === undefined ? `(no "${name}")` : `${name} = ${rv}`}${rv === v ? '   [=]' : '   [≠]'}`);
      }
      return out;
    }
    const out: string[] = [];
    if (showsValue(f.event)) out.push(`${f.event} value ${f.value === null ? '(none: an exception left the frame)' : f.value}`);
    else {
      if (!f.exact) out.push('(some variables are unknown: the delta is against a state no frame shows)');
      for (const [k, v] of Object.entries(f.locals ?? {})) out.push(`${k} = ${v}`);
      if (Object.keys(f.locals ?? {}).length === 0) out.push('(no locals)');
    }
    if (real) out.push(`  real: ${realNode ? (showsValue(realNode.event) ? `-> ${realNode.value}` : formatLocals(realNode.locals)) : 'the program has exited'}`);
    return out;
  }
}

/** Tokens kept free for the model's next frame when deciding whether a session still fits (budget.ts). */
export const sessionAnswerRoom = nextFrameRoom;

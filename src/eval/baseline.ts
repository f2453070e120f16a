/**
 * The baselines every next-state table shows beside the model.
 *
 * `RuleBaseline` (name `baseline`) is the fair one: the best simple rule per action, reading
 * only what the prompt shows (the program, the current stop and the locals visible in the
 * document so far). Where one rule is best for the whole frame and another for SRC (breakpoint:
 * "always exit" against "the target line"), it predicts both and the scorer takes SRC and
 * LOCALS from the second (`bySrc`), so its row is the best rule per component (docs/eval.md).
 *
 * `NaiveBaseline` (name `naive`) is the old rule: "the next source line runs and nothing
 * changes" for every action. It never predicts an exit, a return or a call, so it scores 0 by
 * construction on step_return, breakpoint, continue and inv_step_call; it stays as a second
 * column so older tables can be compared.
 */
import type { StateNode, StateTree } from '../debugger/types';
import type { ExitKind, NdlEvent } from '../ndl/tokens';
import type { ParsedFrame } from '../ndl/types';
import { parseDocument } from '../ndl/parse';
import { opensOwnFrame } from './frame_stack';
import { ProgramFlow } from './program_flow';
import { parameterNames, ProgramSource } from './session_source';
import type { FramePredictor, NextStateTask, Outcome, Prediction } from './types';

function statementLines(tree: StateTree): Array<{ line: number; src: string }> {
  return [...(tree.statementLines ?? [])].sort((a, b) => a.line - b.line);
}

function unchanged(node: StateNode, event: ParsedFrame['event'], src: string): ParsedFrame {
  const empty = Object.keys(node.locals).length === 0;
  return { event, src, shown: [], elided: !empty, locals: { ...node.locals }, exact: true };
}

export function baselineFrame(tree: StateTree, nodeIndex: number): ParsedFrame {
  const node = tree.nodes[nodeIndex];
  const lines = statementLines(tree);
  if (tree.direction === 'forward') {
    const below = lines.find((l) => l.line > node.line);
    return unchanged(node, 'line', below?.src ?? node.src);
  }
  if (node.event === 'inv_return' || node.event === 'inv_exception') return unchanged(node, 'inv_line', node.src);
  const above = [...lines].reverse().find((l) => l.line < node.line);
  return unchanged(node, 'inv_line', above?.src ?? node.src);
}

/** The old rule for every action: the next (previous) line runs, nothing changes. */
export class NaiveBaseline implements FramePredictor {
  readonly name = 'naive';
  async predict(task: NextStateTask): Promise<Prediction> {
    return { frame: baselineFrame(task.tree, task.node) };
  }
}

/** A rule's prediction; `bySrc`, when set, is what SRC and LOCALS are scored on (see score.ts). */
export type RulePrediction = Prediction & { bySrc?: Outcome };

/** A frame that writes `locals` in full (after a jump, a call): every entry shown, nothing elided. */
function fullFrame(event: ParsedFrame['event'], src: string, locals: Record<string, string>): ParsedFrame {
  return { event, src, shown: Object.entries(locals), elided: false, locals: { ...locals }, exact: true };
}

/**
 * The locals the prompt shows for the current stop: its own resolved LOCALS, or for a VALUE
 * frame (a return), those of the latest earlier frame in the same function; {} when none is
 * shown (an inverse document's first frame is the entry's return and shows only its VALUE).
 */
export function visibleLocals(task: NextStateTask, source: ProgramSource): Record<string, string> {
  const frames = parseDocument(task.prefix).frames;
  const last = frames[frames.length - 1];
  if (last?.locals) return last.locals;
  const here = source.functionAt(task.tree.nodes[task.node].line);
  for (let i = frames.length - 2; i >= 0; i--) {
    const f = frames[i];
    if (!f.locals) continue;
    const lines = source.lines.map((text, k) => (text === f.src ? k + 1 : -1)).filter((l) => l > 0);
    if (here && lines.some((l) => source.functionAt(l)?.def === here.def)) return f.locals;
  }
  return {};
}

/** A return expression's value if the prompt shows it: a local's repr, a plain literal, `None` for a bare return. */
function returnValue(returnLine: string, locals: Record<string, string>): string {
  const expr = returnLine.trim().replace(/^return\b/, '').trim();
  if (expr === '') return 'None';
  if (locals[expr] !== undefined) return locals[expr];
  if (/^(-?\d+(\.\d+)?|True|False|None|'[^'\\]*'|\[\]|\{\}|\(\))$/.test(expr)) return expr;
  if (/^"[^"'\\]*"$/.test(expr)) return `'${expr.slice(1, -1)}'`;
  return 'None';
}

interface RuleContext {
  task: NextStateTask;
  node: StateNode;
  source: ProgramSource;
  locals: () => Record<string, string>;
}

/** The harness's `main` wrapper: its return line is where the entry function returns to. */
function mainReturnLine(source: ProgramSource): string | undefined {
  const main = source.lines.findIndex((l) => l === 'def main():');
  return main >= 0 ? source.lines[main + 1] : undefined;
}

/**
 * After the entry function's return frame every forward step lands on `main`'s return with the
 * same VALUE (the entry returns into `return f(...)`). Undefined when the stop is no such return.
 */
function returnToMain(c: RuleContext): Outcome | undefined {
  if (c.task.tree.direction !== 'forward' || c.node.event !== 'return' || c.node.depth !== 1) return undefined;
  const line = mainReturnLine(c.source);
  return line === undefined ? undefined : { frame: { event: 'return', src: line, elided: false, value: c.node.value ?? null, exact: true } };
}

/**
 * Which return line below the rule names: the first at the least indentation, since a guarded
 * `return` inside an `if` is often not taken (on 200 CruxEval programs: SRC 81.0 against 79.0
 * for simply the first one below).
 */
function pickReturn(returns: Array<{ line: number; src: string }>): { line: number; src: string } | undefined {
  if (returns.length === 0) return undefined;
  const indent = (t: string) => t.length - t.trimStart().length;
  const least = Math.min(...returns.map((r) => indent(r.src)));
  return returns.find((r) => indent(r.src) === least);
}

/** step_return: the next `return` line below in the current function, with the value the prompt shows. */
function stepReturnRule(c: RuleContext): Outcome {
  const back = returnToMain(c);
  if (back) return back;
  const fn = c.source.functionAt(c.node.line);
  if (!fn || c.node.event === 'return' || c.node.event === 'exception') return { frame: baselineFrame(c.task.tree, c.task.node) };
  // A line event is about to run its line, so a stop on a return line returns from it.
  const from = c.node.event === 'line' ? c.node.line : c.node.line + 1;
  const body = c.source.statements.filter((s) => s.line >= from && s.line <= fn.end && c.source.functionAt(s.line)?.def === fn.def);
  const ret = pickReturn(body.filter((s) => /^\s*return\b/.test(s.src)));
  // No return below: the function falls off its end and returns None from its last line.
  const src = ret?.src ?? body[body.length - 1]?.src ?? c.node.src;
  return { frame: { event: 'return', src, elided: false, value: ret ? returnValue(ret.src, c.locals()) : 'None', exact: true } };
}

/**
 * inv_step_call: the enclosing `def` line as an inv_call frame with the parameters' visible
 * values; at the entry's return (no locals shown) a one-parameter function gets the return
 * value ("the input equals the output"). From the entry's own call it goes past the entry.
 */
function invStepCallRule(c: RuleContext): Outcome {
  if (c.node.event === 'inv_call') return c.node.depth <= 1 ? { exit: 'inv_exit_entry' } : { frame: baselineFrame(c.task.tree, c.task.node) };
  const fn = c.source.functionAt(c.node.line);
  if (!fn) return { frame: baselineFrame(c.task.tree, c.task.node) };
  const defLine = c.source.lines[fn.def - 1];
  const params = parameterNames(defLine) ?? [];
  const visible = c.locals();
  const args: Record<string, string> = {};
  for (const p of params) if (visible[p] !== undefined) args[p] = visible[p];
  if (params.length === 1 && args[params[0]] === undefined && typeof c.node.value === 'string') args[params[0]] = c.node.value;
  return { frame: fullFrame('inv_call', defLine, args) };
}

/** breakpoint: "always exit" for the whole frame, "the target line, locals unchanged" for SRC. */
function breakpointRule(c: RuleContext): RulePrediction {
  const target = c.task.action.target ?? c.node.src;
  return { exit: 'normal' as ExitKind, bySrc: { frame: fullFrame('line', target, c.locals()) } };
}

/**
 * Steps: the naive next/previous-line rule, except where the stop is the entry's return
 * (forward) or call (inverse), or where the program's text leaves one frame next
 * (program_flow.ts): a function's first statement stepping back (its call, with the arguments
 * as they are now), the one line that can come next or before (as `inv_line_call` where that
 * line always calls), locals unchanged.
 */
function stepRule(c: RuleContext): Outcome {
  const back = returnToMain(c);
  if (back) return back;
  if (c.task.tree.direction === 'inverse' && c.node.event === 'inv_call' && c.node.depth <= 1) return { exit: 'inv_exit_entry' };
  const only = onlyFrame(new ProgramFlow(c.source), c.task.action.kind, c.node, c.task.tree);
  if (only?.event === 'inv_call') return { frame: fullFrame('inv_call', only.src, c.locals()) };
  if (only) return { frame: unchanged(c.node, only.event, only.src) };
  return { frame: baselineFrame(c.task.tree, c.task.node) };
}

/**
 * The one line event the program's text allows after a step, leaving out an exception (a return's
 * VALUE it cannot write), knowing what the decoder reads from the document (frame_stack.ts):
 * whether a line's stop is in its function's own frame, and that an inverse tree's first node is
 * the entry's return.
 */
function onlyFrame(flow: ProgramFlow, kind: string, node: StateNode, tree: StateTree): { event: NdlEvent; src: string } | undefined {
  const ownFrame = (call: NdlEvent) => opensOwnFrame(tree.nodes.find((n) => n.event === call && n.invocation === node.invocation)?.src ?? '');
  const frames =
    node.event === 'line' ? flow.afterLine(node.src, kind === 'step_into', ownFrame('call'))
    : node.event === 'call' ? flow.afterCall(node.src)
    : node.event === 'inv_line' ? flow.beforeLine(node.src, ownFrame('inv_call'))
    : node.event === 'inv_return' ? flow.beforeReturn(node.src, node.index === 0)
    : undefined;
  const left = frames?.filter((f) => f.event !== 'exception');
  if (left?.length !== 1 || left[0].srcs?.length !== 1 || left[0].event === 'return') return undefined;
  return { event: left[0].event, src: left[0].srcs[0] };
}

export class RuleBaseline implements FramePredictor {
  readonly name = 'baseline';
  async predict(task: NextStateTask): Promise<RulePrediction> {
    const source = new ProgramSource(task.tree.context ?? '');
    let cached: Record<string, string> | undefined;
    const c: RuleContext = { task, node: task.tree.nodes[task.node], source, locals: () => (cached ??= visibleLocals(task, source)) };
    switch (task.action.kind) {
      case 'continue':
        return { exit: 'normal' };
      case 'breakpoint':
        return breakpointRule(c);
      case 'step_return':
        return stepReturnRule(c);
      case 'inv_step_call':
        return invStepCallRule(c);
      default:
        return stepRule(c);
    }
  }
}

/** Predicts the truth itself: the scoring harness must give it 100% everywhere. */
export class OraclePredictor implements FramePredictor {
  readonly name = 'oracle';
  async predict(task: NextStateTask): Promise<Prediction> {
    return task.truth;
  }
}

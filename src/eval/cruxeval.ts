/**
 * `ndbg eval cruxeval`: CruxEval output and input prediction with a neural debugger.
 *
 *  - output/step_return: forward document up to f's call frame, action step_return; the
 *    predicted return frame's VALUE is the output.
 *  - output/breakpoint: same prefix, action `breakpoint` at the return line f actually returned
 *    from; the predicted line frame's locals are bound and the return expression of that line
 *    is evaluated over them: that value is the output.
 *  - input/inv_step_call: inverse document whose first frame is f's return (its VALUE is the
 *    known output), action inv_step_call; the predicted call frame's arguments are bound to f's
 *    signature (positional, *args, keyword-only, **kwargs) to rebuild the call.
 *
 * Every candidate is scored as CruxEval's own harness does, by running `assert f(INPUT) ==
 * OUTPUT` (in its rebuilt form) in the sandbox. Greedy decoding gives pass@1; n samples at a
 * temperature give pass@k with the unbiased estimator.
 */
import { buildForwardTree, buildInverseTree, nextNode } from '../debugger';
import { EXIT, StateTree } from '../debugger/types';
import { formatDocument } from '../ndl/format';
import type { ParsedFrame, Trajectory, TrajectoryStep } from '../ndl/types';
import type { ProgramRecord, TraceRecord } from '../trace/types';
import { STRUCTURE_TOKENS } from '../ndl/tokens';
import { cutBeforeFrame, nextFrameText } from './tasks';

export const CRUX_TASKS = ['output_step_return', 'output_breakpoint', 'input_inv_step_call'] as const;
export type CruxTaskKind = (typeof CRUX_TASKS)[number];

export interface CruxTask {
  id: string;
  kind: CruxTaskKind;
  program: ProgramRecord;
  prefix: string;
  /** The real document's continuation (next frame through its <|action_sep|>, or the exit): what a perfect model writes. */
  truth: string;
  /** output_breakpoint: the return line whose expression gives the output. */
  returnSrc?: string;
  /** Its line number in the program (the CONTEXT starts with the program, so the numbers agree). */
  returnLine?: number;
}

function prefixFor(trace: TraceRecord, tree: StateTree, steps: TrajectoryStep[]): { prefix: string; truth: string } | undefined {
  const last = steps[steps.length - 1];
  if (!last.action) return undefined;
  const next = nextNode(tree, last.node, last.action);
  const all = next === EXIT ? steps : [...steps, { node: next }];
  const trajectory: Trajectory = { direction: tree.direction, steps: all, end: next === EXIT ? 'exit' : 'budget' };
  const text = formatDocument(trace, tree, trajectory);
  const prefix = cutBeforeFrame(text, steps.length);
  return { prefix, truth: nextFrameText(text.slice(prefix.length)) };
}

/** The three task prefixes for one traced program (fewer when the run does not allow one). */
export function cruxTasks(program: ProgramRecord, trace: TraceRecord): CruxTask[] {
  const out: CruxTask[] = [];
  if (trace.status !== 'normal') return out;
  const fwd = buildForwardTree(trace);
  const entryCall = fwd.nodes.findIndex((n) => n.event === 'call' && n.depth === 1);
  if (entryCall === 2) {
    const lead: TrajectoryStep[] = [
      { node: 0, action: { kind: 'step_into' } },
      { node: 1, action: { kind: 'step_into' } },
    ];
    const p1 = prefixFor(trace, fwd, [...lead, { node: 2, action: { kind: 'step_return' } }]);
    if (p1) out.push({ id: `${program.id}/output_step_return`, kind: 'output_step_return', program, ...p1 });
    const entryInvocation = fwd.nodes[2].invocation;
    const ret = fwd.nodes.find((n) => n.event === 'return' && n.invocation === entryInvocation);
    if (ret && /^\s*return\b/.test(ret.src)) {
      const p2 = prefixFor(trace, fwd, [...lead, { node: 2, action: { kind: 'breakpoint', target: ret.src } }]);
      if (p2) out.push({ id: `${program.id}/output_breakpoint`, kind: 'output_breakpoint', program, ...p2, returnSrc: ret.src, returnLine: ret.line });
    }
  }
  const inv = buildInverseTree(trace);
  if (inv.nodes.length > 0 && inv.nodes[0].event === 'inv_return') {
    const p3 = prefixFor(trace, inv, [{ node: 0, action: { kind: 'inv_step_call' } }]);
    if (p3) out.push({ id: `${program.id}/input_inv_step_call`, kind: 'input_inv_step_call', program, ...p3 });
  }
  return out;
}

/** A Python dict display of predicted locals; values are the repr texts themselves. */
function localsDisplay(locals: Record<string, string>): string {
  return `{${Object.entries(locals)
    .map(([k, v]) => `${JSON.stringify(k)}: (${v})`)
    .join(', ')}}`;
}

export interface Candidate {
  /** Python statements appended to the program's code; they raise unless the prediction is right. */
  check?: string;
  /** Human-readable answer (the output repr or the rebuilt input). */
  answer?: string;
  error?: string;
}

/**
 * Turns a predicted frame into the check CruxEval would run. For output tasks the check is
 * `assert f(INPUT) == <predicted output>`; for input prediction `assert f(<rebuilt>) == OUTPUT`.
 */
export function candidateFor(task: CruxTask, frame: ParsedFrame | undefined): Candidate {
  const p = task.program;
  const entry = p.entry ?? 'f';
  if (!frame) return { error: 'no frame predicted' };
  if (task.kind === 'output_step_return') {
    if (frame.event !== 'return' || typeof frame.value !== 'string') return { error: `expected a return frame with a value, got ${frame.event}` };
    return { answer: frame.value, check: `assert ${entry}(${p.input}) == (${frame.value})` };
  }
  if (task.kind === 'output_breakpoint') {
    if (frame.event !== 'line' || !frame.locals) return { error: `expected a line frame with locals, got ${frame.event}` };
    // The return statement may span several lines and hold comprehensions: take its expression
    // from the program's AST, and evaluate it with the predicted locals visible as globals
    // (eval's locals mapping is not seen inside comprehension scopes).
    const check = [
      'import ast as __ndbg_ast',
      `__ndbg_scope = dict(globals()); __ndbg_scope.update(${localsDisplay(frame.locals)})`,
      `__ndbg_ret = [n for n in __ndbg_ast.walk(__ndbg_ast.parse(${JSON.stringify(p.code)})) if isinstance(n, __ndbg_ast.Return) and n.lineno == ${task.returnLine ?? 0}][0]`,
      "__ndbg_out = None if __ndbg_ret.value is None else eval(compile(__ndbg_ast.Expression(__ndbg_ret.value), '<return>', 'eval'), __ndbg_scope)",
      `assert ${entry}(${p.input}) == __ndbg_out`,
    ].join('\n');
    const expr = (task.returnSrc ?? '').trim();
    return { answer: `${expr} with ${JSON.stringify(frame.locals)}`, check };
  }
  if (frame.event !== 'inv_call' || !frame.locals) return { error: `expected an inv_call frame with arguments, got ${frame.event}` };
  if (p.output === undefined) return { error: 'the program record has no output to check against' };
  const check = [
    'import inspect as __ndbg_inspect',
    `__ndbg_locals = ${localsDisplay(frame.locals)}`,
    '__ndbg_args, __ndbg_kwargs = [], {}',
    `for __ndbg_p in __ndbg_inspect.signature(${entry}).parameters.values():`,
    '    __ndbg_v = __ndbg_locals[__ndbg_p.name]',
    '    if __ndbg_p.kind == __ndbg_p.VAR_POSITIONAL: __ndbg_args.extend(__ndbg_v)',
    '    elif __ndbg_p.kind == __ndbg_p.VAR_KEYWORD: __ndbg_kwargs.update(__ndbg_v)',
    '    elif __ndbg_p.kind == __ndbg_p.KEYWORD_ONLY: __ndbg_kwargs[__ndbg_p.name] = __ndbg_v',
    '    else: __ndbg_args.append(__ndbg_v)',
    `assert ${entry}(*__ndbg_args, **__ndbg_kwargs) == (${p.output})`,
  ].join('\n');
  return { answer: Object.values(frame.locals).join(', '), check };
}

import { availableActions, breakpointTargets, buildForwardTree, buildInverseTree, nextNode, statementLines } from '../../src/debugger';
import { breakpointLine } from '../../src/debugger/actions';
import { EXIT, StateNode, StateTree } from '../../src/debugger/types';
import { fixtureTrace } from './helpers';

/** Index of the k-th node (from 0) whose "event depth src" description contains `text`. */
function at(tree: StateTree, text: string, k = 0): number {
  const hits = tree.nodes.filter((n) => `${n.event} d${n.depth} ${n.src.trim()}`.includes(text));
  if (hits.length <= k) throw new Error(`no node #${k} matching ${text}`);
  return hits[k].index;
}

const desc = (tree: StateTree, j: number) => (j === EXIT ? 'EXIT' : `${tree.nodes[j].event} d${tree.nodes[j].depth} ${tree.nodes[j].src.trim()}`);
const go = (tree: StateTree, i: number, kind: string, target?: string) =>
  desc(tree, nextNode(tree, i, { kind, target } as Parameters<typeof nextNode>[2]));

describe('forward actions at the edges', () => {
  const tree = buildForwardTree(fixtureTrace('two_calls_one_line'));

  test('at a call node', () => {
    const i = at(tree, 'call d2 def sq(x):'); // sq(a)
    expect(go(tree, i, 'step_into')).toBe('line d2 return x * x');
    expect(go(tree, i, 'step_over')).toBe('line d2 return x * x');
    expect(nextNode(tree, i, { kind: 'step_return' })).toBe(at(tree, 'return d2 return x * x'));
    expect(go(tree, i, 'continue')).toBe('EXIT');
  });

  test('at a line that makes calls: step_into enters the first callee, step_over skips both', () => {
    const i = at(tree, 'line d1 s = sq(a) + sq(b)');
    expect(go(tree, i, 'step_into')).toBe('call d2 def sq(x):');
    expect(go(tree, i, 'step_over')).toBe('line d1 t = inc(sq(inc(a)))');
    expect(go(tree, i, 'step_return')).toBe('return d1 return s, t');
  });

  test('at a return node: step_over steps like step; step_return skips the sibling call to the caller', () => {
    const i = at(tree, 'return d2 return x * x'); // return of sq(a)
    expect(go(tree, i, 'step_into')).toBe('call d2 def sq(x):'); // sq(b)
    expect(go(tree, i, 'step_over')).toBe('call d2 def sq(x):');
    expect(go(tree, i, 'step_return')).toBe('line d1 t = inc(sq(inc(a)))');
  });

  test("at the entry's return and at main's return", () => {
    const fRet = at(tree, 'return d1 return s, t');
    expect(go(tree, fRet, 'step_into')).toBe('return d0 return f(2, 3)');
    expect(go(tree, fRet, 'step_over')).toBe('return d0 return f(2, 3)');
    expect(go(tree, fRet, 'step_return')).toBe('return d0 return f(2, 3)');
    const mainRet = tree.nodes.length - 1;
    for (const kind of ['step_into', 'step_over', 'step_return', 'continue']) expect(go(tree, mainRet, kind)).toBe('EXIT');
    expect(tree.exitKind).toBe('normal');
  });

  test('past the end of a truncated (never) run', () => {
    const t = buildForwardTree(fixtureTrace('never_in_callee'));
    expect(t.exitKind).toBe('never');
    const last = t.nodes.length - 1;
    expect(nextNode(t, last, { kind: 'step_into' })).toBe(EXIT);
    expect(nextNode(t, last, { kind: 'step_over' })).toBe(EXIT);
    // spin never returns, nor do f and main.
    expect(nextNode(t, at(t, 'call d2 def spin(k):'), { kind: 'step_return' })).toBe(EXIT);
    expect(nextNode(t, at(t, 'line d1 return spin(m)'), { kind: 'step_over' })).toBe(EXIT);
    expect(nextNode(t, 0, { kind: 'step_return' })).toBe(EXIT);
    // A line that is reached again and again before the cut is still a breakpoint hit.
    expect(go(t, last - 5, 'breakpoint', '        k = k + 1')).toBe('line d2 k = k + 1');
  });

  test('an uncaught exception crossing frames: step_over stops at the exception in the caller', () => {
    const t = buildForwardTree(fixtureTrace('uncaught'));
    const i = at(t, "line d2 w = check(d, 'b')");
    expect(go(t, i, 'step_over')).toBe("exception d2 w = check(d, 'b')");
    expect(go(t, i, 'step_return')).toBe("return d2 w = check(d, 'b')");
    // From g's return (left by the exception) the caller's next event is its exception.
    expect(go(t, nextNode(t, i, { kind: 'step_return' }), 'step_return')).toBe('exception d1 return g(d)');
    expect(t.nodes[nextNode(t, i, { kind: 'step_return' })].value).toBeNull();
    expect(go(t, t.nodes.length - 1, 'step_into')).toBe('EXIT');
    expect(t.exitKind).toBe('error');
  });

  test('breakpoints: first later line node at any depth; EXIT on a line never reached again', () => {
    const i = at(tree, 'line d1 s = sq(a) + sq(b)');
    const j = nextNode(tree, i, { kind: 'breakpoint', target: '    return x + 1' });
    expect(desc(tree, j)).toBe('line d2 return x + 1');
    expect(tree.nodes[j].locals).toEqual({ x: '2' }); // inc(a), the first of the two inc calls
    const after = at(tree, 'line d1 return s, t');
    expect(nextNode(tree, after, { kind: 'breakpoint', target: '    return x + 1' })).toBe(EXIT);
    // Not a line event even though a return node shows that text.
    expect(nextNode(tree, after, { kind: 'breakpoint', target: '    return f(2, 3)' })).toBe(EXIT);
    const { reached, unreached } = breakpointTargets(tree, after);
    expect(reached).toEqual([]);
    expect(unreached).toContain('    return x + 1');
    expect(unreached).toContain('    s = sq(a) + sq(b)');
    expect(availableActions(tree, after)).toContain('breakpoint');
    // The pdb line for an unreached target is the statement line with that text.
    expect(breakpointLine(tree, after, '    return x + 1')).toBe(5);
  });

  test('breakpointTargets lists distinct later line texts in order, and unreached statements', () => {
    const t = buildForwardTree(fixtureTrace('while_else_break'));
    const i = at(t, 'line d1 i = 0');
    const { reached, unreached } = breakpointTargets(t, i);
    expect(reached).toEqual(['    while i < len(nums):', '        if nums[i] == target:', '        i += 1', '            break', '    return i']);
    // The else branch never runs (`else:` itself never gets a line event so it is no target);
    // the current line and main's line are not reached again either.
    expect(unreached).toEqual(['    i = 0', '        i = -1', '    return f([4, 5, 6], 5)']);
  });

  test('continue and EXIT', () => {
    expect(nextNode(tree, 3, { kind: 'continue' })).toBe(EXIT);
    expect(nextNode(tree, EXIT, { kind: 'step_into' })).toBe(EXIT);
    expect(availableActions(tree, EXIT)).toEqual([]);
  });

  test('bad calls throw', () => {
    expect(() => nextNode(tree, tree.nodes.length, { kind: 'step_into' })).toThrow(RangeError);
    expect(() => nextNode(tree, 0, { kind: 'inv_step_into' })).toThrow(/not a forward action/);
    expect(() => nextNode(tree, 0, { kind: 'breakpoint' })).toThrow(/target/);
  });

  test('breakpoint is offered only when there is a target', () => {
    const node = (i: number, event: StateNode['event'], depth: number): StateNode => ({
      index: i, event, depth, invocation: 0, line: 1, src: 'x', locals: {}, value: null, traceIndex: i,
    });
    const bare: StateTree = { direction: 'forward', nodes: [node(0, 'call', 0), node(1, 'line', 0), node(2, 'return', 0)], exitKind: 'normal' };
    expect(availableActions(bare, 0)).toEqual(['step_into', 'step_over', 'step_return', 'breakpoint', 'continue']);
    expect(availableActions(bare, 1)).toEqual(['step_into', 'step_over', 'step_return', 'continue']);
  });
});

describe('inverse actions', () => {
  const tree = buildInverseTree(fixtureTrace('two_calls_one_line'));
  const line = 's = sq(a) + sq(b)';

  test('inverse step over a line that made calls skips all of its callees', () => {
    const copy = at(tree, `inv_line_call d1 ${line}`); // the one copy, before sq(b) and sq(a)
    expect(go(tree, copy, 'inv_step_over')).toBe(`inv_line d1 ${line}`);
    expect(nextNode(tree, copy, { kind: 'inv_step_over' })).toBe(copy + 7);
    expect(go(tree, copy, 'inv_step_into')).toBe('inv_return d2 return x * x');
  });

  test('inv_step_call goes to the arguments; at an inv_call it goes on to the calling line', () => {
    const copy = at(tree, `inv_line_call d1 ${line}`);
    expect(go(tree, copy, 'inv_step_call')).toBe('inv_call d1 def f(a, b):');
    const sqRet = copy + 1;
    const sqCall = nextNode(tree, sqRet, { kind: 'inv_step_call' });
    expect(desc(tree, sqCall)).toBe('inv_call d2 def sq(x):');
    expect(tree.nodes[sqCall].locals).toEqual({ x: '3' });
    // From sq(b)'s arguments: up to the calling line's own node, or over to sq(a), the earlier callee.
    expect(go(tree, sqCall, 'inv_step_call')).toBe(`inv_line d1 ${line}`);
    expect(go(tree, sqCall, 'inv_step_over')).toBe('inv_return d2 return x * x');
    expect(tree.nodes[nextNode(tree, sqCall, { kind: 'inv_step_over' })].locals).toEqual({ x: '2' });
  });

  test("moving past the entry's call is inv_exit_entry", () => {
    const entry = tree.nodes.length - 1;
    expect(desc(tree, entry)).toBe('inv_call d1 def f(a, b):');
    for (const kind of ['inv_step_into', 'inv_step_over', 'inv_step_call']) expect(go(tree, entry, kind)).toBe('EXIT');
    expect(tree.exitKind).toBe('inv_exit_entry');
    expect(availableActions(tree, 0)).toEqual(['inv_step_into', 'inv_step_over', 'inv_step_call']);
    expect(breakpointTargets(tree, 0)).toEqual({ reached: [], unreached: [] });
    expect(() => nextNode(tree, 0, { kind: 'step_into' })).toThrow(/not an inverse action/);
  });

  test('inverse step over from a return at the top of a truncated tree', () => {
    const t = buildInverseTree(fixtureTrace('never_in_callee'));
    expect(go(t, 0, 'inv_step_over')).toBe('inv_line d1 return spin(m)');
    expect(go(t, 1, 'inv_step_call')).toBe('inv_call d2 def spin(k):');
  });
});

describe('statement lines', () => {
  test('skips continuation lines, strings, comments, docstrings, class bodies and else/finally', () => {
    const src = [
      'X = 1',
      'class A:',
      '    y = 2',
      '    def m(self):',
      '        """doc',
      '        still doc"""',
      '        a = (1,',
      '             2)  # (',
      '        s = "#(" + \'\'\'',
      'text ) ',
      "'''",
      '        if a:',
      '            pass',
      '        else:',
      '            # comment',
      '            b = 1 + \\',
      '                2',
      '        try:',
      '            c = [x for x in a]',
      '        finally:',
      '            return c',
      '',
      'def main():',
      '    return f(3)',
    ].join('\n');
    expect(statementLines(src).map((s) => s.line)).toEqual([7, 9, 12, 13, 16, 18, 19, 21, 24]);
  });
});

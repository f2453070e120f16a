import { buildForwardTree, buildInverseTree, nextNode } from '../../src/debugger';
import type { StateTree } from '../../src/debugger/types';
import { reference } from '../helpers/reference';
import { fixtureTrace } from './helpers';

function shape(tree: StateTree): string[] {
  return tree.nodes.map((n) => `${n.event} d${n.depth} ${n.src.trim()}`);
}

describe('forward tree', () => {
  test('has every recorded event in order, main included, and the run status as exit', () => {
    const trace = fixtureTrace('count');
    const tree = buildForwardTree(trace);
    expect(tree.direction).toBe('forward');
    expect(tree.exitKind).toBe('normal');
    expect(tree.nodes).toHaveLength(trace.events.length);
    tree.nodes.forEach((n, i) => {
      expect(n.index).toBe(i);
      expect(n.traceIndex).toBe(i);
      expect(n.event).toBe(trace.events[i].event);
      expect(n.depth).toBe(trace.events[i].depth);
      expect(n.locals).toEqual(trace.events[i].locals);
    });
    expect(shape(tree)[0]).toBe('call d0 def main():');
    expect(tree.context).toBe(trace.code.replace(/\n+$/, '') + '\n\ndef main():\n    return f("berry", "r")\n');
  });

  test('exit kinds follow the status: error and never', () => {
    expect(buildForwardTree(fixtureTrace('uncaught')).exitKind).toBe('error');
    expect(buildForwardTree(fixtureTrace('never_loop')).exitKind).toBe('never');
  });
});

describe('inverse tree', () => {
  test('reproduces the event/SRC sequence of the reference inverse document', () => {
    const doc = reference('count.inverse.ndl');
    const frames = doc.split('<|frame_sep|>').slice(1, -1); // drop the header and the EXIT frame
    const expected = frames.map((f) => {
      const m = /^<\|(inv_[a-z_]+)_sep\|><\|src_sep\|>(.*?)<\|arg_sep\|>/s.exec(f);
      if (!m) throw new Error(`bad frame ${f}`);
      return `${m[1]} ${m[2]}`;
    });
    // The reference program is count(s, t); the fixture is the same body named f.
    const tree = buildInverseTree(fixtureTrace('count'));
    const got = tree.nodes.map((n) => `${n.event} ${n.src.replace('def f(', 'def count(')}`);
    expect(got).toEqual(expected);
    expect(tree.exitKind).toBe('inv_exit_entry');
    expect(tree.nodes[0].value).toBe('2');
  });

  test('two calls on one line: one copy of the line, then both callees (latest first), one deeper', () => {
    const tree = buildInverseTree(fixtureTrace('two_calls_one_line'));
    const s = shape(tree);
    const line = 's = sq(a) + sq(b)';
    const first = s.indexOf(`inv_line_call d1 ${line}`);
    expect(s.filter((x) => x === `inv_line_call d1 ${line}`)).toHaveLength(1);
    expect(s.slice(first, first + 8)).toEqual([
      `inv_line_call d1 ${line}`,
      'inv_return d2 return x * x',
      'inv_line d2 return x * x',
      'inv_call d2 def sq(x):',
      'inv_return d2 return x * x',
      'inv_line d2 return x * x',
      'inv_call d2 def sq(x):',
      `inv_line d1 ${line}`,
    ]);
    // sq(b) (b = 3) comes first going backwards.
    expect(tree.nodes[first + 3].locals).toEqual({ x: '3' });
    expect(tree.nodes[first + 6].locals).toEqual({ x: '2' });
    // The copy carries the line's own state and trace event.
    expect(tree.nodes[first].traceIndex).toBe(tree.nodes[first + 7].traceIndex);
    expect(tree.nodes[first].locals).toEqual(tree.nodes[first + 7].locals);
    // inv_step_over from the copy skips both callees; inv_step_into enters the latest one.
    expect(nextNode(tree, first, { kind: 'inv_step_over' })).toBe(first + 7);
    expect(nextNode(tree, first, { kind: 'inv_step_into' })).toBe(first + 1);
  });

  test.each([
    ['sorted_key_one_line', 'ys = sorted(xs, key=lambda v: -v)', 3],
    ['join_generator_one_line', "s = ''.join(str(x) for x in xs)", 3],
  ])('a line with several traced calls (%s) gets one copy; inv_step_over from it skips them all', (id, line, calls) => {
    const trace = fixtureTrace(id);
    const tree = buildInverseTree(trace);
    const s = shape(tree);
    const copies = s.flatMap((x, i) => (x === `inv_line_call d1 ${line}` ? [i] : []));
    expect(copies).toHaveLength(1);
    const copy = copies[0];
    const own = nextNode(tree, copy, { kind: 'inv_step_over' });
    expect(s[own]).toBe(`inv_line d1 ${line}`);
    // Between them: the callees' blocks, one level deeper, each from its inv_return (or a
    // generator's yield) back to its inv_call, the latest call first.
    const between = tree.nodes.slice(copy + 1, own);
    expect(between.every((n) => n.depth === 2)).toBe(true);
    expect(between.filter((n) => n.event === 'inv_call')).toHaveLength(calls);
    const invocations = between.filter((n) => n.event === 'inv_call').map((n) => n.invocation);
    expect(invocations).toEqual([...invocations].sort((a, b) => b - a));
    const line_ = trace.events[tree.nodes[copy].traceIndex];
    expect(line_.calls?.length).toBe(calls);
  });

  test('nested calls are expanded recursively and only the entry invocation is kept', () => {
    const tree = buildInverseTree(fixtureTrace('recursion'));
    const s = shape(tree);
    expect(s[0]).toBe('inv_return d1 return total + fact(2)');
    expect(s[s.length - 1]).toBe('inv_call d1 def f(n):');
    expect(Math.max(...tree.nodes.map((n) => n.depth))).toBe(5); // fact(4) -> fact(1): depths 2..5
    expect(s.some((x) => x.includes('main'))).toBe(false);
    // Every inverse node's index is its position.
    tree.nodes.forEach((n, i) => expect(n.index).toBe(i));
  });

  test('an uncaught exception: the tree starts at the entry return without value, then the exception', () => {
    const tree = buildInverseTree(fixtureTrace('uncaught_in_entry'));
    expect(shape(tree).slice(0, 3)).toEqual(['inv_return d1 z = y / 0', 'inv_exception d1 z = y / 0', 'inv_line d1 z = y / 0']);
    expect(tree.nodes[0].value).toBeNull();
    expect(tree.nodes[1].value).toBe("ZeroDivisionError('division by zero')");
  });

  test('a truncated run: starts with the copy of the line still running, then the cut callee without return', () => {
    const trace = fixtureTrace('never_in_callee');
    const tree = buildInverseTree(trace);
    const s = shape(tree);
    expect(s[0]).toBe('inv_line_call d1 return spin(m)');
    expect(tree.nodes[1].traceIndex).toBe(trace.events.length - 1);
    expect(s.filter((x) => x.startsWith('inv_return'))).toEqual([]);
    expect(s.slice(-3)).toEqual(['inv_line d1 return spin(m)', 'inv_line d1 m = n * 2', 'inv_call d1 def f(n):']);
  });

  test('an entry that was never called gives an empty inverse tree', () => {
    const trace = fixtureTrace('main_args_error');
    expect(buildInverseTree(trace).nodes).toEqual([]);
    expect(shape(buildForwardTree(trace))).toEqual([
      'call d0 def main():',
      'line d0 return f(undefined_name)',
      'exception d0 return f(undefined_name)',
      'return d0 return f(undefined_name)',
    ]);
  });
});

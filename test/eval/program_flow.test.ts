import { buildForwardTree, buildInverseTree, nextNode } from '../../src/debugger';
import type { StateNode } from '../../src/debugger/types';
import { opensOwnFrame } from '../../src/eval/frame_stack';
import { ProgramFlow, type NextFrame } from '../../src/eval/program_flow';
import { ProgramSource } from '../../src/eval/session_source';
import { traceInProcess } from '../../src/trace/inprocess';
import { fixtureTraces } from './helpers';

const CODE = [
  'def plain(a, b):',
  '    c = a + b',
  '    d = c * 2',
  '    return d',
  '',
  'def comp(xs):',
  '    ys = [x * 2 for x in xs]',
  '    n = len(ys)',
  '    return ys',
  '',
  'def loop(n):',
  '    while n > 0:',
  '        n -= 1',
  '        m = n',
  '    k = n',
  '    return k',
  '',
  'def spread(xs):',
  '    total = sum(',
  '        xs)',
  '    t = plain(total, 1)',
  '    if t > 3:',
  '        t = 3',
  '    return t',
  '',
  'def branch(x):',
  '    """Which way."""',
  '    if x > 2:',
  '        y = 1',
  '    elif x > 1:',
  '        y = 2',
  '    else:',
  '        y = 3',
  '    try:',
  '        z = 10 // (x - 2)',
  '    except ZeroDivisionError:',
  '        z = 0',
  '    for i in range(x):',
  '        if i == 1:',
  '            continue',
  '        if i == 3:',
  '            break',
  '        z += i',
  '    return y + z',
  '',
  'def tail(x):',
  '    if x:',
  '        x += 1',
  '',
  'def spin(n):',
  '    while True:',
  '        n -= 1',
  '        if n < 0:',
  '            break',
  '    return n',
  '',
  'def f(xs):',
  '    tail(0)',
  '    return loop(len(comp(xs))) + spread(xs) + branch(len(xs)) + plain(1, 2) + spin(2)',
  '',
].join('\n');

const FLOW = new ProgramFlow(new ProgramSource(CODE));

const COMPREHENSIONS = [
  'def grow(xs):',
  '    ys = [x + 1 for x in xs]',
  '    for k in range(3):',
  '        ys = [y + k for y in ys]',
  '        n = len([y for y in ys if y > k])',
  '    return sorted(ys, key=lambda v: -v)',
  '',
  'def f(xs):',
  '    m = grow(xs)',
  '    return [v * 2 for v in grow(m)]',
  '',
].join('\n');

/** The answer as `event: src | src` strings, sorted, for readable expectations. */
function shown(frames: NextFrame[] | undefined): string[] | undefined {
  return frames?.map((f) => `${f.event}: ${f.srcs ? [...f.srcs].map((s) => s.trim()).sort().join(' | ') : '*'}`).sort();
}

describe('program flow', () => {
  test('forward from a line: the lines that can follow, a return or exception at the line itself, a call where it can call', () => {
    expect(shown(FLOW.afterLine('    c = a + b', true))).toEqual(['exception: c = a + b', 'line: d = c * 2']);
    expect(shown(FLOW.afterLine('    return d', false))).toEqual(['exception: return d', 'return: return d']);
    expect(shown(FLOW.afterLine('    while n > 0:', false))).toEqual(['exception: while n > 0:', 'line: k = n | n -= 1']);
    expect(shown(FLOW.afterLine('        m = n', false))).toEqual(['exception: m = n', 'line: while n > 0:']);
    // `while True:` never fails its test: only its body follows, and `break` leaves.
    expect(shown(FLOW.afterLine('    while True:', false))).toEqual(['exception: while True:', 'line: n -= 1']);
    expect(shown(FLOW.beforeLine('    return n'))).toEqual(['inv_line: break']);
    expect(shown(FLOW.afterLine('    if x > 2:', false))).toEqual(['exception: if x > 2:', 'line: elif x > 1: | y = 1']);
    // `else:` runs no line: its body's first statement is the target; each branch goes on to `try:`.
    expect(shown(FLOW.afterLine('    elif x > 1:', false))).toEqual(['exception: elif x > 1:', 'line: y = 2 | y = 3']);
    expect(shown(FLOW.afterLine('        y = 1', false))).toEqual(['exception: y = 1', 'line: try:']);
    // The end of a try body skips its handler; `continue` and a loop body's end go back to the header, `break` out.
    expect(shown(FLOW.afterLine('        z = 10 // (x - 2)', false))).toEqual(['exception: z = 10 // (x - 2)', 'line: for i in range(x):']);
    expect(shown(FLOW.afterLine('            continue', false))).toEqual(['exception: continue', 'line: for i in range(x):']);
    // Two `break`s read the same: the union of where each leaves to.
    expect(shown(FLOW.afterLine('            break', false))).toEqual(['exception: break', 'line: return n | return y + z']);
    expect(shown(FLOW.afterLine('        z += i', false))).toEqual(['exception: z += i', 'line: for i in range(x):']);
    // A test that fails at the end of the body returns from the header's own line.
    expect(shown(FLOW.afterLine('    if x:', false))).toEqual(['exception: if x:', 'line: x += 1', 'return: if x:']);
    // Stepping into a line that always calls: the call or an exception. Stepping over it: the line after.
    expect(shown(FLOW.afterLine('    t = plain(total, 1)', true))).toBeUndefined(); // spread has a statement over two lines
    const main = '    return loop(len(comp(xs))) + spread(xs) + branch(len(xs)) + plain(1, 2) + spin(2)';
    expect(shown(FLOW.afterLine('    tail(0)', true))).toEqual(['call: *', 'exception: tail(0)']);
    expect(shown(FLOW.afterLine('    tail(0)', false))).toEqual(['exception: tail(0)', 'line: ' + main.trim()]);
    expect(shown(FLOW.afterLine(main, false))).toEqual(['exception: ' + main.trim(), 'return: ' + main.trim()]);
    // A condition may skip a call: the line after stays open.
    const maybe = new ProgramFlow(new ProgramSource('def g(x):\n    return x\n\ndef h(x):\n    y = x and g(x)\n    return y\n'));
    expect(shown(maybe.afterLine('    y = x and g(x)', true))).toEqual(['call: *', 'exception: y = x and g(x)', 'line: return y']);
  });

  test('backwards from a line: the lines that can come before it, as inv_line_call where they call; the call before a first statement', () => {
    expect(shown(FLOW.beforeLine('    d = c * 2'))).toEqual(['inv_line: c = a + b']);
    expect(shown(FLOW.beforeLine('    c = a + b'))).toEqual(['inv_call: def plain(a, b):']);
    expect(FLOW.callBefore('    c = a + b')).toBe('def plain(a, b):');
    // A comprehension always runs in a frame of its own: the line before is its inv_line_call copy.
    expect(shown(FLOW.beforeLine('    n = len(ys)'))).toEqual(['inv_line_call: ys = [x * 2 for x in xs]']);
    // A loop header is reached from the line before the loop and from the body's end.
    expect(shown(FLOW.beforeLine('    while n > 0:'))).toEqual(['inv_call: def loop(n):', 'inv_line: m = n']);
    expect(FLOW.callBefore('    while n > 0:')).toBeUndefined();
    expect(shown(FLOW.beforeLine('    k = n'))).toEqual(['inv_line: while n > 0:']);
    expect(shown(FLOW.beforeLine('    try:'))).toEqual(['inv_line: y = 1 | y = 2 | y = 3']);
    expect(shown(FLOW.beforeLine('    return y + z'))).toEqual(['inv_line: break | for i in range(x):']);
    // The docstring runs nothing: the first statement is the `if`.
    expect(FLOW.callBefore('    if x > 2:')).toBe('def branch(x):');
    // Back from a return: its own line.
    expect(shown(FLOW.beforeReturn('    return d'))).toEqual(['inv_line: return d']);
    expect(shown(FLOW.beforeReturn('    if x:'))).toEqual(['inv_line: if x:']);
    expect(FLOW.beforeReturn('    c = a + b')).toBeUndefined();
    // A comprehension's frame returns at its line too; known to be the function's return, the line's own copy.
    const comp = new ProgramFlow(new ProgramSource('def g(xs):\n    return [x for x in xs]\n'));
    expect(comp.beforeReturn('    return [x for x in xs]')).toBeUndefined();
    expect(shown(comp.beforeReturn('    return [x for x in xs]', true))).toEqual(['inv_line_call: return [x for x in xs]']);
  });

  test("step_return: the function's return or an exception at one of its lines; inv_step_call: its call", () => {
    const lines = ['c = a + b', 'd = c * 2', 'return d'].join(' | ');
    expect(shown(FLOW.returnFrom('    d = c * 2'))).toEqual([`exception: ${lines}`, `return: ${lines}`]);
    expect(shown(FLOW.callOf('    d = c * 2'))).toEqual(['inv_call: def plain(a, b):']);
    expect(shown(FLOW.callOf('    return y + z'))).toEqual(['inv_call: def branch(x):']);
    expect(FLOW.returnFrom('    ys = [x * 2 for x in xs]')).toBeUndefined();
  });

  test("back into a line's calls: a return at a line of a function it names, or its own line for a comprehension; back past a call: the caller's line or an earlier call's return", () => {
    const plain = ['c = a + b', 'd = c * 2', 'return d'];
    expect(shown(FLOW.intoCalls('    t = plain(total, 1)'))).toEqual([`inv_return: ${plain.join(' | ')}`]);
    expect(shown(FLOW.intoCalls('    ys = [x * 2 for x in xs]'))).toEqual(['inv_return: ys = [x * 2 for x in xs]']);
    expect(shown(FLOW.beforeCall('    t = plain(total, 1)'))).toEqual([`inv_line: t = plain(total, 1)`, `inv_return: ${plain.join(' | ')}`]);
    const other = (code: string, line: string) => new ProgramFlow(new ProgramSource(code)).intoCalls(line);
    // A function value the line does not name can run: a parameter, a subscript's, a call's result, a decorator's wrapper, a generator's body.
    expect(other('def g(fn, x):\n    y = fn(x)\n    return y\n', '    y = fn(x)')).toBeUndefined();
    expect(other('def h(x):\n    return x\n\ndef g(x):\n    y = {"h": h}["h"](x)\n    return y\n', '    y = {"h": h}["h"](x)')).toBeUndefined();
    expect(other('def g(xs, f):\n    y = sorted(xs, key=f)\n    return y\n', '    y = sorted(xs, key=f)')).toBeUndefined();
    expect(other('def d(f):\n    return f\n\n@d\ndef h(x):\n    return x\n\ndef g(x):\n    y = h(x)\n    return y\n', '    y = h(x)')).toBeUndefined();
    expect(other('def gen(n):\n    yield n\n\ndef g(it):\n    y = len(list(it))\n    return y\n', '    y = len(list(it))')).toBeUndefined();
    // A key the program names, a lambda, a builtin: known.
    expect(shown(other('def h(x):\n    return -x\n\ndef g(xs):\n    y = sorted(xs, key=h)\n    return y\n', '    y = sorted(xs, key=h)'))).toEqual(['inv_return: return -x']);
    expect(shown(other('def g(xs):\n    y = sorted(xs, key=lambda v: -v)\n    return y\n', '    y = sorted(xs, key=lambda v: -v)'))).toEqual(['inv_return: y = sorted(xs, key=lambda v: -v)']);
  });

  test("forward from a call: its first statement; from a return: what follows the calling line; a line with a comprehension, known to be the function's", () => {
    expect(shown(FLOW.afterCall('def plain(a, b):'))).toEqual(['line: c = a + b']);
    // The docstring runs nothing.
    expect(shown(FLOW.afterCall('def branch(x):'))).toEqual(['line: if x > 2:']);
    expect(FLOW.afterCall('    c = a + b')).toBeUndefined();
    expect(shown(FLOW.afterReturn('    t = plain(total, 1)'))).toBeUndefined(); // its function has no graph (a statement over two lines)
    expect(shown(FLOW.afterReturn('    ys = [x * 2 for x in xs]'))).toEqual(['call: *', 'exception: ys = [x * 2 for x in xs]', 'line: n = len(ys)']);
    expect(shown(FLOW.afterReturn('    return ys'))).toEqual(['call: *', 'exception: return ys', 'return: return ys']);
    expect(FLOW.afterLine('    ys = [x * 2 for x in xs]', false)).toBeUndefined();
    expect(shown(FLOW.afterLine('    ys = [x * 2 for x in xs]', false, true))).toEqual(['exception: ys = [x * 2 for x in xs]', 'line: n = len(ys)']);
    expect(shown(FLOW.afterLine('    ys = [x * 2 for x in xs]', true, true))).toEqual(['call: *', 'exception: ys = [x * 2 for x in xs]']);
    // Backwards the same: a comprehension's line, known to be the function's, steps back like any line.
    expect(shown(FLOW.beforeLine('    ys = [x * 2 for x in xs]', true))).toEqual(['inv_call: def comp(xs):']);
  });

  test('no answer where the text does not settle it', () => {
    // A comprehension's own frame has line events with the same text.
    expect(FLOW.afterLine('    ys = [x * 2 for x in xs]', true)).toBeUndefined();
    expect(FLOW.beforeLine('    ys = [x * 2 for x in xs]')).toBeUndefined();
    // An except header is reached from an exception, not a line.
    expect(FLOW.beforeLine('    except ZeroDivisionError:')).toBeUndefined();
    // A statement over two lines stops on its second line too: its function gets no graph.
    expect(FLOW.callBefore('    total = sum(')).toBeUndefined();
    expect(FLOW.beforeLine('    return t')).toBeUndefined();
    // Decorated: the call's SRC is the decorator line. `with` runs code at its header on the way out.
    expect(new ProgramFlow(new ProgramSource('def d(f):\n    return f\n\n@d\ndef g(x):\n    return x\n')).callBefore('    return x')).toBeUndefined();
    const withBlock = new ProgramFlow(new ProgramSource('def g(p):\n    with open(p) as h:\n        t = h.read()\n    return t\n'));
    expect(withBlock.afterLine('        t = h.read()', false)).toBeUndefined();
    // Two statements that read the same: the union of their answers.
    const twice = new ProgramFlow(new ProgramSource('def g(x):\n    x += 1\n    x += 1\n    return x\n'));
    expect(shown(twice.afterLine('    x += 1', false))).toEqual(['exception: x += 1', 'line: return x | x += 1']);
  });

  test('Python agrees: from every stop of every run, each action lands on an event and line the rules allow', () => {
    const traces = traceInProcess([
      ...['[1, 2, 3, 4]', '[1, 2]'].map((input, k) => ({ id: `flow-${k}`, code: CODE, input })),
      // Comprehension lines in a loop and after a call: each runs in its function's frame and in its own.
      ...['[1, 2, 3]', '[5]'].map((input, k) => ({ id: `comp-${k}`, code: COMPREHENSIONS, input })),
    ]);
    const fired: Record<string, number> = {};
    for (const t of [...traces, ...fixtureTraces()]) {
      for (const tree of [buildForwardTree(t), buildInverseTree(t)]) {
        const flow = new ProgramFlow(new ProgramSource(tree.context ?? ''));
        // What the decoder reads from the document (frame_stack.ts), here from the tree: the frame's call, and the caller's line.
        const callOf = (n: StateNode) => tree.nodes.find((m) => m.event === (tree.direction === 'forward' ? 'call' : 'inv_call') && m.invocation === n.invocation);
        const callerOf = (n: StateNode) => tree.nodes.slice(0, tree.nodes.indexOf(callOf(n)!)).reverse().find((m) => m.depth < n.depth);
        const answerFor = (node: StateNode, kind: string): NextFrame[] | undefined => {
          if (kind === 'step_return') return node.event === 'line' ? flow.returnFrom(node.src) : undefined;
          if (kind === 'inv_step_call') return node.event === 'inv_call' || node.event === 'inv_exception' ? undefined : flow.callOf(node.src);
          if (node.event === 'line') return flow.afterLine(node.src, kind === 'step_into', opensOwnFrame(callOf(node)?.src ?? ''));
          if (node.event === 'call') return flow.afterCall(node.src);
          if (node.event === 'return') {
            const caller = callerOf(node);
            return caller && opensOwnFrame(callOf(caller)?.src ?? '') ? flow.afterReturn(caller.src) : undefined;
          }
          if (node.event === 'inv_line') return flow.beforeLine(node.src, opensOwnFrame(callOf(node)?.src ?? ''));
          if (node.event === 'inv_line_call') return kind === 'inv_step_into' ? flow.intoCalls(node.src) : undefined;
          if (node.event === 'inv_call') {
            // The caller: the inv_line_call copy one level up that the callee's reversed nodes follow.
            const i = tree.nodes.indexOf(node);
            const caller = tree.nodes.slice(0, i).reverse().find((n) => n.depth < node.depth);
            return caller?.event === 'inv_line_call' ? flow.beforeCall(caller.src) : undefined;
          }
          // The inverse tree's first node is the entry function's own return.
          return node.event === 'inv_return' ? flow.beforeReturn(node.src, tree.nodes.indexOf(node) === 0) : undefined;
        };
        tree.nodes.forEach((node, i) => {
          for (const kind of tree.direction === 'forward' ? ['step_into', 'step_over', 'step_return'] : ['inv_step_into', 'inv_step_over', 'inv_step_call']) {
            const answer = answerFor(node, kind);
            if (!answer) continue;
            const key = `${kind} from ${node.event}${node.event === 'inv_line' && /[[({][^\]})]*\bfor\b/.test(node.src) ? ' with a comprehension' : ''}`;
            fired[key] = (fired[key] ?? 0) + 1;
            const next = tree.nodes[nextNode(tree, i, { kind } as Parameters<typeof nextNode>[2])];
            const allowed = next !== undefined && answer.some((a) => a.event === next.event && (!a.srcs || a.srcs.includes(next.src)));
            expect([t.id, kind, node.src, next?.event, next?.src, allowed]).toEqual([t.id, kind, node.src, next?.event, next?.src, true]);
          }
        });
      }
    }
    for (const key of ['step_into from line', 'step_over from line', 'step_return from line', 'inv_step_into from inv_line', 'inv_step_over from inv_line with a comprehension', 'inv_step_over from inv_return', 'inv_step_call from inv_line', 'inv_step_into from inv_line_call', 'inv_step_into from inv_call', 'inv_step_over from inv_call', 'step_into from call', 'step_over from return']) {
      expect([key, fired[key] > 10]).toEqual([key, true]);
    }
  });
});

import { ProgramFlow } from '../../src/eval/program_flow';
import { ProgramSource } from '../../src/eval/session_source';
import { ALL_ACTIONS, makeTasks } from '../../src/eval/tasks';
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
  'def f(xs):',
  '    return loop(len(comp(xs))) + spread(xs)',
  '',
].join('\n');

describe('program flow', () => {
  const flow = new ProgramFlow(new ProgramSource(CODE));

  test('the call before a first statement, the line after and the line before a plain statement', () => {
    expect(flow.callBefore('    c = a + b')).toBe('def plain(a, b):');
    expect(flow.callBefore('    return loop(len(comp(xs))) + spread(xs)')).toBe('def f(xs):');
    expect(flow.lineAfter('    c = a + b')).toBe('    d = c * 2');
    expect(flow.lineBefore('    d = c * 2')).toBe('    c = a + b');
    // The line after a comprehension's line is still that line's (the comprehension is its callee).
    expect(flow.lineBefore('    n = len(ys)')).toBe('    ys = [x * 2 for x in xs]');
    expect(flow.lineAfter('        n -= 1')).toBe('        m = n');
    expect(flow.lineBefore('        m = n')).toBe('        n -= 1');
    expect(flow.lineAfter('    t = plain(total, 1)')).toBe('    if t > 3:');
  });

  test('no answer where the text does not settle it', () => {
    // A comprehension's own frame has lines with the same text; a loop header comes back to itself.
    expect(flow.callBefore('    ys = [x * 2 for x in xs]')).toBeUndefined();
    expect(flow.lineAfter('    ys = [x * 2 for x in xs]')).toBeUndefined();
    expect(flow.callBefore('    while n > 0:')).toBeUndefined();
    // A loop's last line goes back to its header or out; a line after a block has two ways in.
    expect(flow.lineAfter('        m = n')).toBeUndefined();
    expect(flow.lineBefore('    k = n')).toBeUndefined();
    expect(flow.lineBefore('    return t')).toBeUndefined();
    // A block header's next line depends on its test; a return does not go on.
    expect(flow.lineAfter('    if t > 3:')).toBeUndefined();
    expect(flow.lineAfter('    d = c * 2')).toBe('    return d');
    expect(flow.lineAfter('    return d')).toBeUndefined();
    expect(flow.lineBefore('        t = 3')).toBeUndefined();
    // A statement over two lines may stop on its second first.
    expect(flow.callBefore('    total = sum(')).toBeUndefined();
    expect(flow.lineBefore('    t = plain(total, 1)')).toBeUndefined();
    // The first statement's line before is the call (callBefore), not a line.
    expect(flow.lineBefore('    c = a + b')).toBeUndefined();
    // Decorated: the call's SRC is the decorator line. A docstring runs no line.
    expect(new ProgramFlow(new ProgramSource('def d(f):\n    return f\n\n@d\ndef g(x):\n    return x\n')).callBefore('    return x')).toBeUndefined();
    expect(new ProgramFlow(new ProgramSource('def g(x):\n    """Doc."""\n    y = x\n    return y\n')).callBefore('    y = x')).toBe('def g(x):');
    // Two statements that read the same.
    expect(new ProgramFlow(new ProgramSource('def g(x):\n    x += 1\n    x += 1\n    return x\n')).lineAfter('    x += 1')).toBeUndefined();
  });

  test('Python agrees: every answer is the line (or call) the real run stops on next', () => {
    const [trace] = traceInProcess([{ id: 'flow', code: CODE, input: '[1, 2, 3]' }]);
    const traces = [trace, ...fixtureTraces()];
    const fired = { callBefore: 0, lineBefore: 0, lineAfter: 0 };
    for (const t of makeTasks(traces, ALL_ACTIONS.filter((a) => /^(inv_)?step_(into|over)$/.test(a)), { seed: 3, perProgram: 30 }).tasks) {
      const node = t.tree.nodes[t.node];
      const rules = new ProgramFlow(new ProgramSource(t.tree.context ?? ''));
      const truth = t.truth.frame;
      if (t.tree.direction === 'inverse' && node.event === 'inv_line') {
        const call = rules.callBefore(node.src);
        const before = rules.lineBefore(node.src);
        if (call !== undefined) {
          fired.callBefore++;
          expect([node.src, truth?.event, truth?.src]).toEqual([node.src, 'inv_call', call]);
        } else if (before !== undefined) {
          fired.lineBefore++;
          expect([node.src, truth?.event === 'inv_line' || truth?.event === 'inv_line_call', truth?.src]).toEqual([node.src, true, before]);
        }
      } else if (t.tree.direction === 'forward' && node.event === 'line') {
        const after = rules.lineAfter(node.src);
        if (after === undefined || truth?.event !== 'line') continue;
        fired.lineAfter++;
        expect([node.src, truth.src]).toEqual([node.src, after]);
      }
    }
    for (const n of Object.values(fired)) expect(n).toBeGreaterThan(2);
  });
});

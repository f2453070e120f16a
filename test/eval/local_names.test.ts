import { buildForwardTree, buildInverseTree, nextNode } from '../../src/debugger';
import { LocalNames } from '../../src/eval/local_names';
import { ProgramCalls } from '../../src/eval/program_calls';
import { ProgramSource } from '../../src/eval/session_source';
import { traceInProcess } from '../../src/trace/inprocess';
import { fixtureTraces } from './helpers';

const CODE = [
  'def total(xs, k=2, *rest, scale=1, **opts):',
  '    acc = 0',
  '    for x in xs:',
  '        acc += x * k',
  '    ys = [y + 1 for y in xs]',
  '    return acc + len(ys)',
  '',
  'def outer(n):',
  '    def inner(m):',
  '        return m + n',
  '    return inner(n)',
  '',
  'def gen(xs):',
  '    for x in xs:',
  '        yield x',
  '',
  'def f(xs):',
  '    t = total(xs, 3, scale=2)',
  '    u = outer(t)',
  '    return t + u + sum(gen(xs))',
  '',
].join('\n');

const sorted = (s: ReadonlySet<string> | undefined) => [...(s ?? [])].sort();

describe('local names', () => {
  const names = new LocalNames(new ProgramSource(CODE));

  test("a frame's keys are the names its function's text spells, a comprehension's iterator and the elision marker", () => {
    const rule = names.forFrame('line', ['        acc += x * k'])!;
    expect(rule.exact).toBeUndefined();
    for (const n of ['xs', 'k', 'rest', 'scale', 'opts', 'acc', 'x', 'ys', 'y', '.0', '..']) expect(rule.names.has(n)).toBe(true);
    // Names of other functions are not this frame's.
    for (const n of ['t', 'u', 'm', 'inner']) expect(rule.names.has(n)).toBe(false);
    // Several lines: the union of their functions' names.
    const both = names.forFrame('line', ['    acc = 0', '    u = outer(t)'])!;
    expect(['acc', 'u', 't'].every((n) => both.names.has(n))).toBe(true);
    // An inner function's frame: its own text, which spells the free variable it reads.
    expect(sorted(names.forFrame('line', ['        return m + n'])?.names)).toEqual(['..', '.0', 'inner', 'm', 'n'].sort());
  });

  test("a top-level function's call frame holds exactly its parameters, in the code object's order", () => {
    expect(names.forFrame('call', ['def total(xs, k=2, *rest, scale=1, **opts):'])?.exact).toEqual(['xs', 'k', 'scale', 'rest', 'opts']);
    expect(names.forFrame('inv_call', ['def f(xs):'])?.exact).toEqual(['xs']);
    // A nested function also holds its free variables; a generator's resumptions hold every local.
    expect(names.forFrame('call', ['    def inner(m):'])?.exact).toBeUndefined();
    expect(names.forFrame('call', ['def gen(xs):'])?.exact).toBeUndefined();
    // Only a call frame is held to its parameters.
    expect(names.forFrame('line', ['def f(xs):'])?.exact).toBeUndefined();
  });

  test('no rule where the text cannot settle it: a class, a line outside functions, a text that is no line', () => {
    expect(names.forFrame('line', ['    return nothing'])).toBeUndefined();
    expect(new LocalNames(new ProgramSource('x = 1\ndef f(a):\n    return a\n')).forFrame('line', ['x = 1'])).toBeUndefined();
    const withClass = new LocalNames(new ProgramSource('def f(a):\n    class C:\n        z = 1\n    return a\n'));
    expect(withClass.forFrame('line', ['    return a'])).toBeUndefined();
  });

  test("a step's delta names only what its line spells, or a variable whose object those may share", () => {
    const locals = { xs: '[1, 2]', ys: '[1, 2]', rows: '[[1, 2], [3]]', n: '2', s: "'[1, 2]'", other: '[9]' };
    const rule = names.forStep('    xs.append(n)', locals);
    // xs and n are spelled; ys may be the same list and rows may hold it; s is a string, other another list.
    expect(sorted(rule.names)).toEqual(['..', 'append', 'n', 'rows', 'xs', 'ys']);
    // A repr that may have been cut could hold anything mutable.
    const long = `[${'7, '.repeat(100)}7]`;
    expect(names.forStep('    xs.pop()', { xs: long, other: '[9]' }).names.has('other')).toBe(true);
  });

  test('Python agrees: every frame of every run holds only names its rule allows, and a call frame exactly its own', () => {
    const traces = traceInProcess(['[1, 2, 3]', '[]'].map((input, k) => ({ id: `names-${k}`, code: CODE, input })));
    let exact = 0;
    let checked = 0;
    for (const t of [...traces, ...fixtureTraces()]) {
      for (const tree of [buildForwardTree(t), buildInverseTree(t)]) {
        const rules = new LocalNames(new ProgramSource(tree.context ?? ''));
        for (const node of tree.nodes) {
          const rule = node.locals && rules.forFrame(node.event, [node.src]);
          if (!rule) continue;
          const keys = Object.keys(node.locals!);
          checked++;
          expect([t.id, node.src, keys.filter((k) => !rule.names.has(k))]).toEqual([t.id, node.src, []]);
          if (rule.exact) {
            exact++;
            expect([t.id, node.src, keys]).toEqual([t.id, node.src, rule.exact]);
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(exact).toBeGreaterThan(5);
  });

  test("Python agrees: every step's true delta keeps to forStep, aliases included", () => {
    const aliasing = ['def f(xs):', '    ys = xs', '    rows = [ys, [0]]', '    xs.append(len(rows))', '    ys.pop(0)', '    n = len(xs)', '    return rows', ''].join('\n');
    const traces = [...traceInProcess([{ id: 'alias', code: aliasing, input: '[5, 6]' }, ...['[1, 2, 3]', '[]'].map((input, k) => ({ id: `step-${k}`, code: CODE, input }))]), ...fixtureTraces()];
    let checked = 0;
    for (const t of traces) {
      for (const tree of [buildForwardTree(t), buildInverseTree(t)]) {
        const rules = new LocalNames(new ProgramSource(tree.context ?? ''));
        const calls = new ProgramCalls(tree.context ?? '');
        const forward = tree.direction === 'forward';
        tree.nodes.forEach((node, i) => {
          for (const kind of forward ? (['step_into', 'step_over'] as const) : (['inv_step_into', 'inv_step_over'] as const)) {
            const next = tree.nodes[nextNode(tree, i, { kind })];
            if (!next?.locals || !node.locals) continue;
            const applies = forward
              ? node.event === 'line' && next.event === 'line' && (kind === 'step_into' || calls.callsOn(node.src) === 'none')
              : (node.event === 'inv_line' || node.event === 'inv_line_call') && next.event === 'inv_line';
            if (!applies) continue;
            const rule = rules.forStep(forward ? node.src : next.src, node.locals);
            const changed = Object.keys(next.locals).filter((k) => next.locals![k] !== node.locals![k]);
            expect([t.id, kind, node.src, changed.filter((k) => !rule.names.has(k))]).toEqual([t.id, kind, node.src, []]);
            checked++;
          }
        });
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});

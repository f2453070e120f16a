import { buildForwardTree } from '../../src/debugger';
import { commandsFor, compareRun, DEFAULT_SCRIPT_OPTIONS, pdbJob, runDifferential, ScriptComparison } from '../../src/debugger/differential';
import { generatorCloseBlocks } from '../../src/debugger/generator_class';
import { PdbStop, runPdbHarness } from '../../src/debugger/pdb';
import type { Action, StateTree } from '../../src/debugger/types';
import { traceInProcess } from '../../src/trace/inprocess';
import type { ProgramRecord, TraceRecord } from '../../src/trace/types';

// Generator expressions, comprehensions and lambdas as mined real code has them (3.11: every
// comprehension and genexpr has its own frame; only genexprs are generator frames).
const PROGRAMS: ProgramRecord[] = [
  { id: 'max_genexpr', code: 'def g(t):\n    return t * 2\n\ndef f(items):\n    m = max((g(t) for t in items), default=0)\n    return m\n', input: '[1, 2, 3]' },
  { id: 'sum_any_all_join', code: "def f(xs):\n    s = sum(x * x for x in xs)\n    a = any(x > 2 for x in xs)\n    b = all(x > 0 for x in xs)\n    return ''.join(str(x) for x in xs), s, a, b\n", input: '[1, 2, 3]' },
  { id: 'nested_genexpr_helper', code: 'def h(y):\n    z = y - 1\n    return z\n\ndef f(xss):\n    return all(any(h(y) > 0 for y in xs) for xs in xss), sum(sum(h(y) for y in xs) for xs in xss)\n', input: '[[1, 2], [3], [1]]' },
  { id: 'multiline_genexpr_if', code: 'def ok(t):\n    return t % 2 == 0\n\ndef f(items):\n    m = max(\n        (t * t\n         for t in items if ok(t)),\n        default=0)\n    return m\n', input: '[1, 2, 3, 4]' },
  { id: 'genexpr_raises', code: 'def g(t):\n    return 10 // t\n\ndef f(items):\n    try:\n        m = sum(g(t) for t in items)\n    except ZeroDivisionError:\n        m = -1\n    return m\n', input: '[1, 0, 2]' },
  { id: 'yield_from_value', code: 'def sub(n):\n    yield n\n    return n * 2\n\ndef outer(n):\n    r = yield from sub(n)\n    yield r\n\ndef f(n):\n    return list(outer(n))\n', input: '2' },
  { id: 'local_gen_abandoned', code: 'def f(xs):\n    it = (x * 2 for x in xs)\n    a = next(it)\n    return a\n', input: '[1, 2, 3]' },
  { id: 'local_gen_finally', code: 'def gen(xs):\n    try:\n        for x in xs:\n            yield x\n    finally:\n        n = len(xs)\n\ndef f(xs):\n    g = gen(xs)\n    first = next(g)\n    g = None\n    return first\n', input: '[1, 2]' },
  { id: 'zip_generators', code: 'def gen(xs):\n    for x in xs:\n        yield x * 2\n\ndef f(a, b):\n    return [p + q for p, q in zip(gen(a), gen(b))]\n', input: '[1, 2], [3, 4]' },
];

// Not generator frames at all: these agree with pdb everywhere.
const COMPREHENSIONS: ProgramRecord[] = [
  { id: 'comprehensions', code: 'def h(x):\n    return x + 1\n\ndef f(xs):\n    r = [h(x) for x in xs]\n    s = {x % 2 for x in xs}\n    d = {x: h(x) for x in xs}\n    return len(r) + len(s) + len(d)\n', input: '[1, 2, 3]' },
  { id: 'lambdas', code: 'def f(xs):\n    ys = sorted(xs, key=lambda v: -v)\n    zs = list(map(lambda v: v + 1, ys))\n    return min(zs, key=lambda v: abs(v - 2))\n', input: '[3, 1, 2]' },
];

let traces: Map<string, TraceRecord> | undefined;
function trace(id: string): TraceRecord {
  traces ??= new Map(traceInProcess([...PROGRAMS, ...COMPREHENSIONS]).map((t) => [t.id, t]));
  const t = traces.get(id);
  if (!t) throw new Error(`no program ${id}`);
  return t;
}

const steps = (n: number): Action[] => Array.from({ length: n }, () => ({ kind: 'step_into' }));

/** One script through real pdb, compared with the oracle. */
async function check(id: string, actions: Action[], count = false, tree?: StateTree): Promise<ScriptComparison> {
  const t = trace(id);
  const tr = tree ?? buildForwardTree(t);
  const [result] = await runPdbHarness([pdbJob(t, count, 30, [commandsFor(tr, actions)])]);
  return compareRun(t.id, 0, tr, actions, result.runs[0]);
}

describe('generator frames in the pdb differential check', () => {
  test('step_return at the return of a function called from a genexpr: pdb runs to the genexpr’s next line (bdb waits on the generator frame)', async () => {
    const tree = buildForwardTree(trace('max_genexpr'));
    const gReturn = tree.nodes.findIndex((n) => n.event === 'return' && n.depth === 3);
    const c = await check('max_genexpr', [...steps(gReturn), { kind: 'step_return' }]);
    // The oracle goes to the caller's next node, the genexpr's yield; pdb ignores the yield
    // and the next resumption's call and stops at its line (the expression's line again).
    expect(c.mismatch?.step).toBe(gReturn + 1);
    expect(c.mismatch?.expected).toMatchObject({ event: 'return', line: 5, depth: 2 });
    expect(c.mismatch?.actual).toMatchObject({ event: 'line', line: 5, depth: 2, gen_rule: 'stopframe' });
    expect(c.mismatch?.verdict).toBe('generator');
  });

  test('step_into at the end of `yield from` with a value: bdb never stops at that StopIteration', async () => {
    const tree = buildForwardTree(trace('yield_from_value'));
    const stop = tree.nodes.findIndex((n) => n.event === 'exception' && n.value === 'StopIteration(4)');
    expect(stop).toBeGreaterThan(0);
    const c = await check('yield_from_value', steps(stop + 2));
    expect(c.mismatch?.step).toBe(stop);
    expect(c.mismatch?.actual).toMatchObject({ event: 'line', line: 7, gen_rule: 'send_end' });
    expect(c.mismatch?.verdict).toBe('generator');
  });

  test('a generator dropped while pdb holds the last stop’s locals is closed where pdb sees no events', async () => {
    const tree = buildForwardTree(trace('local_gen_abandoned'));
    const blocks = generatorCloseBlocks(tree, 0);
    expect(blocks).toHaveLength(1);
    const [start, end] = blocks[0];
    expect(tree.nodes[start]).toMatchObject({ event: 'call', depth: 1 });
    expect(tree.nodes[start + 1]).toMatchObject({ event: 'exception', value: 'GeneratorExit()' });
    expect(tree.nodes[end - 1]).toMatchObject({ event: 'return', invocation: tree.nodes[start].invocation });
    // f's return (pdb holds f's locals, `it` among them), then step: the close never happens.
    const c = await check('local_gen_abandoned', steps(start + 1));
    expect(c.mismatch?.step).toBe(start);
    expect(c.mismatch?.actual).toMatchObject({ event: 'return', depth: 0, gen_rule: null });
    expect(c.mismatch?.verdict).toBe('generator');
    // In counting mode `return` from f's return agrees on the stop but counts 3 events fewer.
    const r = await check('local_gen_abandoned', [...steps(start - 1), { kind: 'step_return' }], true);
    expect((r.mismatch?.actual as PdbStop).ordinal).toBe(tree.nodes.length - 1 - (end - start));
    expect(r.mismatch?.verdict).toBe('generator');
  });

  test('the other way round: pdb runs a close that the tracer’s f_locals reads hid from the trace', async () => {
    const t = trace('local_gen_finally');
    expect(t.events.some((e) => e.src.includes('n = len(xs)'))).toBe(false);
    const c = await check('local_gen_finally', [{ kind: 'breakpoint', target: '        n = len(xs)' }]);
    expect(c.mismatch?.expected).toEqual({ event: 'exit', kind: 'normal' });
    expect(c.mismatch?.actual).toMatchObject({ event: 'line', line: 6, gen_rule: 'close' });
    expect(c.mismatch?.verdict).toBe('generator');
    // Counting mode reads f_locals at every event like the tracer: the same close is hidden.
    expect((await check('local_gen_finally', [{ kind: 'breakpoint', target: '        n = len(xs)' }], true)).mismatch).toBeUndefined();
  });

  test('the class is exact: a wrong oracle inside or after generator frames is still `other`', async () => {
    // A genexpr line reached by step_into (bdb's plain rules) with tampered locals.
    const tree = buildForwardTree(trace('max_genexpr'));
    const line = tree.nodes.findIndex((n) => n.event === 'line' && n.depth === 2);
    tree.nodes[line].locals = { ...tree.nodes[line].locals, t: '99' };
    const c = await check('max_genexpr', steps(line + 1), false, tree);
    expect(c.mismatch).toMatchObject({ step: line, verdict: 'other' });
    // A node after a close pdb does not see, tampered: leaving the close out does not explain it.
    const t2 = buildForwardTree(trace('local_gen_abandoned'));
    const last = t2.nodes.length - 1;
    t2.nodes[last].value = "'wrong'";
    const [start] = generatorCloseBlocks(t2, 0)[0];
    const c2 = await check('local_gen_abandoned', steps(start + 1), false, t2);
    expect(c2.mismatch).toMatchObject({ step: start, verdict: 'other' });
  });

  test('seeded scripts over genexpr programs: every disagreement is in the generator class, in both modes', async () => {
    const all = PROGRAMS.map((p) => trace(p.id));
    for (const count of [false, true]) {
      const report = await runDifferential(all, { ...DEFAULT_SCRIPT_OPTIONS, scripts: 40, seed: 3, count, workers: 2, timeout: 30 });
      expect(report.mismatches.filter((m) => m.verdict !== 'generator')).toEqual([]);
      expect(report.byVerdict.generator).toBeGreaterThan(20);
      expect(report.pythonMismatches).toEqual([]);
    }
  });

  test('list/set/dict comprehensions and lambdas called from builtins agree with pdb at every stop', async () => {
    const all = COMPREHENSIONS.map((p) => trace(p.id));
    for (const count of [false, true]) {
      const report = await runDifferential(all, { ...DEFAULT_SCRIPT_OPTIONS, scripts: 40, seed: 4, count, workers: 2, timeout: 30 });
      expect(report.mismatches).toEqual([]);
      expect(report.steps).toBeGreaterThan(200);
    }
  });

  test('the harness reports gen_rule only where bdb waits on a generator frame', async () => {
    const t = trace('max_genexpr');
    // step into the genexpr, then `next` there (a generator frame), then `step`.
    const tree = buildForwardTree(t);
    const genLine = tree.nodes.findIndex((n) => n.event === 'line' && n.depth === 2);
    const script = [...Array.from({ length: genLine }, () => 'step'), 'next', 'step'];
    const [r] = await runPdbHarness([pdbJob(t, false, 30, [script])]);
    const rules = r.runs[0].stops.map((s) => s.gen_rule ?? null);
    expect(rules.slice(0, genLine + 1).every((x) => x === null)).toBe(true);
    expect(rules[genLine + 1]).toBe('stopframe');
    expect(rules[genLine + 2]).toBe(null);
  });
});

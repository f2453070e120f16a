import * as fs from 'fs';
import * as path from 'path';
import { checkAssertion, entryReturnValue, runSandboxed, SandboxPool, traceBatch, traceProgram } from '../../src/trace/index';
import type { ProgramRecord, TraceRecord } from '../../src/trace/types';
import { FIXTURES } from './helpers';

const programs: Array<ProgramRecord & { output: string }> = fs
  .readFileSync(path.join(FIXTURES, 'programs.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));

let pool: SandboxPool;
beforeAll(() => {
  pool = new SandboxPool(2, { timeoutS: 5 });
});
afterAll(() => pool.close());

async function collect(progs: ProgramRecord[]): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const r of traceBatch(progs, { pool })) out.push(r);
  return out;
}

describe('sandboxed tracing of a CruxEval-style fixture', () => {
  it('traces every program normally, in input order, with f returning the expected repr', async () => {
    const recs = await collect(programs);
    expect(recs.map((r) => r.id)).toEqual(programs.map((p) => p.id));
    for (const [i, r] of recs.entries()) {
      expect({ id: r.id, status: r.status, error: r.error }).toEqual({ id: programs[i].id, status: 'normal', error: undefined });
      expect({ id: r.id, value: entryReturnValue(r) }).toEqual({ id: r.id, value: programs[i].output });
      expect(r.entry_call).toBe(`f(${programs[i].input})`);
      expect(r.events[0]).toMatchObject({ event: 'call', depth: 0, func: 'main' });
    }
  });

  it('is deterministic: the same programs give the same bytes (seeded random, fixed hash seed)', async () => {
    const a = await collect(programs);
    const b = await collect([...programs].reverse());
    expect(JSON.stringify(b.reverse())).toEqual(JSON.stringify(a));
    // set iteration order depends on PYTHONHASHSEED for strings
    const setProg = { id: 'set', code: 'def f(xs):\n    return list(set(xs))', input: "['apple', 'pear', 'fig', 'kiwi', 'plum']" };
    const [x, y] = await collect([setProg, setProg]);
    expect(entryReturnValue(x)).toBe(entryReturnValue(y));
  });

  it('records generators as settrace reports them: resumes are calls, yields are returns', async () => {
    const r = await traceProgram({ id: 'gen', code: programs.find((p) => p.id === 'own_12')!.code, call: 'f(3)' }, { pool });
    const gen = r.events.filter((e) => e.func === 'gen');
    expect(gen.filter((e) => e.event === 'call').length).toBe(4); // first call + 3 resumes
    expect(gen.filter((e) => e.resumed).length).toBe(3);
    expect(gen.filter((e) => e.yield).map((e) => e.value)).toEqual(['0', '1', '4']);
    const last = gen[gen.length - 1];
    expect(last).toMatchObject({ event: 'return', value: 'None' });
    expect(last.yield).toBeUndefined();
    expect(new Set(gen.map((e) => e.depth))).toEqual(new Set([2]));
  });

  it('program errors are data: status error with the message, exception events recorded', async () => {
    const r = await traceProgram({ id: 'div', code: 'def f(a):\n    return 10 // a', input: '0' }, { pool });
    expect(r.status).toBe('error');
    expect(r.error).toBe('ZeroDivisionError: integer division or modulo by zero');
    const ex = r.events.filter((e) => e.event === 'exception');
    expect(ex[0]).toMatchObject({ depth: 1, value: "ZeroDivisionError('integer division or modulo by zero')" });
    const rets = r.events.filter((e) => e.event === 'return');
    expect(rets.every((e) => e.value === null)).toBe(true); // returns caused by the exception
  });

  it('captures and caps stdout/stderr without disturbing the result', async () => {
    const code = 'import sys\ndef f():\n    print("hello")\n    sys.stderr.write("warn\\n")\n    print("{\\"id\\": \\"fake\\"}")\n    return 1';
    const r = await traceProgram({ id: 'out', code, call: 'f()' }, { pool });
    expect(r.status).toBe('normal');
    expect(r.id).toBe('out');
    expect(r.stdout).toBe('hello\n{"id": "fake"}\n');
    expect(r.stderr).toBe('warn\n');
  });

  it('runs code and CruxEval assertions in the sandbox', async () => {
    const code = 'def f(x):\n    print("x is", x)\n    return x * 2';
    expect(await checkAssertion(code, 'assert f(4) == 8', { pool })).toMatchObject({ passed: true, status: 'normal', stdout: 'x is 4\n' });
    const bad = await checkAssertion(code, 'assert f(4) == 9', { pool });
    expect(bad).toMatchObject({ passed: false, status: 'error' });
    expect(bad.error).toMatch(/^AssertionError/);
    const loop = await runSandboxed("while True:\n    pass", { timeoutS: 0.5 });
    expect(loop).toMatchObject({ status: 'never', limit: 'timeout' });
  });
});

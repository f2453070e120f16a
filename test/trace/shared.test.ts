import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { defaultProgramsConfig, generateProgram } from '../../src/programs/index';
import { CallRecord, SandboxPool, traceBatch } from '../../src/trace/index';
import type { TraceRecord } from '../../src/trace/types';
import { assetPath } from '../../src/util/paths';
import { FIXTURES } from './helpers';

/**
 * The shared child (docs/trace.md, "Shared process"): programs that purity.shareable admits run
 * one after another in one fork; their records must be byte-identical to a fresh fork's.
 */
async function collect(pool: SandboxPool, progs: CallRecord[]): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const r of traceBatch(progs, { pool })) out.push(r);
  return out;
}

const fixtures: CallRecord[] = fs
  .readFileSync(path.join(FIXTURES, 'programs.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { id: string; code: string; input: string })
  .map((p) => ({ id: p.id, code: p.code, call: `f(${p.input})` }));

const generated: CallRecord[] = Array.from({ length: 60 }, (_, i) => generateProgram(7, i, defaultProgramsConfig().generator)).flatMap((g) =>
  g.inputs.slice(0, 2).map((input, k) => ({ id: `${g.id}-${k}`, code: g.code, call: `f(${input})` })),
);

/** `verdict` (a Python expression of `co`, the compiled program) for each code, from purity.py. */
function purityVerdicts(codes: string[], verdict: string): unknown[] {
  const script = [
    'import json, sys',
    `sys.path.insert(0, ${JSON.stringify(path.dirname(assetPath('src/trace/purity.py')))})`,
    'import purity, tracer',
    `print(json.dumps([(lambda co: ${verdict})(tracer.compile_program(c, "f()")) for c in json.load(sys.stdin)]))`,
  ].join('\n');
  const res = spawnSync('python3', ['-S', '-c', script], { input: JSON.stringify(codes), encoding: 'utf8' });
  expect(res.stderr).toBe('');
  return JSON.parse(res.stdout) as unknown[];
}

describe('purity.shareable', () => {
  const cases: Array<[string, boolean]> = [
    ['def f(xs):\n    return sorted(xs, key=lambda x: -x)', true],
    ['def f(n):\n    g = (i * i for i in range(n))\n    return [x for x in g if x % 2]', true],
    ['N = 3\ndef f():\n    global N\n    N += 1\n    return N', true],
    ['def f(d):\n    d["k"] = 1\n    return d', true],
    ['def f(s):\n    if __name__ == "__ndbg__":\n        print(s)\n    return s', true],
    ['import math\ndef f(x):\n    return math.sqrt(x)', false],
    ['def f(x):\n    from os import path\n    return x', false],
    ['class A:\n    pass\ndef f():\n    return A()', false],
    ['def f(o):\n    o.x = 1\n    return o', false],
    ['def f(o):\n    del o.x', false],
    ['def f():\n    return getattr(len, "__self__")', false],
    ['def f():\n    return (lambda: 0).__globals__', false],
    ['def f():\n    return __builtins__', false],
    ['def f():\n    g = (i for i in [1])\n    return g.gi_frame.f_builtins', false],
    ['def f(x):\n    return id(x)', false],
    ['def f(x):\n    return eval(x)', false],
    ['def f():\n    return open("x").read()', false],
    ['def f():\n    exit(3)', false],
  ];
  it('admits code that can leave nothing behind, refuses code that could', () => {
    const got = purityVerdicts(cases.map((c) => c[0]), 'purity.shareable(co)') as boolean[];
    expect(cases.map(([code], i) => [code, got[i]])).toEqual(cases.map(([code, want]) => [code, want]));
  });
});

describe('purity.first_look', () => {
  // Admitted: math, re, __future__ (the miner admits what its workers import before forking).
  const cases: Array<[string, boolean]> = [
    ['import math\ndef f(x):\n    return math.sqrt(x)', true],
    ['from __future__ import annotations\nfrom re import sub\ndef f(s: Text):\n    return sub("a", "b", s)', true],
    ['def f(x):\n    import math\n    return math.floor(x)', true],
    ['import re\nclass A:\n    def __init__(self, x):\n        self.x = x\ndef f():\n    return A(1).x', true],
    ['import os\ndef f():\n    return os.getcwd()', false],
    ['import math\nimport os.path\ndef f(x):\n    return x', false],
    ['def f(x):\n    from os import path\n    return x', false],
    ['from math import *\ndef f(x):\n    return x', false],
    ['class A:\n    def __del__(self):\n        print(1)\ndef f():\n    return A()', false],
    ['import re\ndef f():\n    re.purge()', false],
    ['import math\ndef f(x):\n    return id(math)', false],
    ['def f(g):\n    return g.__globals__', false],
    ['import math\ndef f(x):\n    setattr(math, "pi", 3)', false],
  ];
  it('lets in admitted imports, classes and attribute stores, and nothing that reaches further', () => {
    const admitted = 'frozenset(["math", "re", "__future__"])';
    const got = purityVerdicts(cases.map((c) => c[0]), `[purity.first_look(co, ${admitted}), purity.shareable(co)]`) as Array<[boolean, boolean]>;
    expect(cases.map(([code], i) => [code, got[i][0]])).toEqual(cases.map(([code, want]) => [code, want]));
    // The strict rule keeps every one of them out.
    expect(got.every(([, strict]) => strict === false)).toBe(true);
  });
});

describe('pre-imported modules and the first-look rule in the shared child', () => {
  it('give the same records as a fresh fork per program, with the importing and class-defining programs shared', async () => {
    const progs: CallRecord[] = [
      { id: 'typing', code: 'import typing\nimport re\ndef f(s: typing.Any):\n    words = re.split(r"\\s+", s)\n    return len(words)', call: 'f("a b  c")' },
      { id: 'dates', code: 'import datetime\ndef f(d):\n    day = datetime.date(2024, 1, d)\n    return day.isoformat()', call: 'f(5)' },
      { id: 'plain', code: 'def f(n):\n    return n * 2', call: 'f(4)' },
      { id: 'frac', code: 'from fractions import Fraction\ndef f(a, b):\n    q = Fraction(a, b)\n    return str(q)', call: 'f(6, 4)' },
      { id: 'class', code: 'import re\nclass Box:\n    def __init__(self, w):\n        self.w = w\ndef f(w):\n    b = Box(w)\n    b.w += 1\n    return b.w', call: 'f(2)' },
    ];
    const modules = ['typing', 're', 'datetime', 'fractions'];
    const relaxed = new SandboxPool(1, { preimport: modules, firstLookModules: modules });
    const strict = new SandboxPool(1, { sessionPrograms: 0 });
    try {
      const a = await collect(relaxed, progs);
      const b = await collect(strict, progs);
      expect(a.map((r) => JSON.stringify(r))).toEqual(b.map((r) => JSON.stringify(r)));
      expect(a.map((r) => r.events.at(-1)!.value)).toEqual(['3', "'2024-01-05'", '8', "'3/2'", '3']);
      const stats = await relaxed.stats();
      expect(stats).toMatchObject({ shared: 5, forked: 0 });
    } finally {
      await relaxed.close();
      await strict.close();
    }
  });

  it('refuses to start a worker that would import random before the programs seed it', async () => {
    const pool = new SandboxPool(1, { preimport: ['statistics'] });
    try {
      const [rec] = await collect(pool, [{ id: 'x', code: 'def f():\n    return 1', call: 'f()' }]);
      expect(rec.status).toBe('error');
      expect(rec.error).toMatch(/random/);
    } finally {
      await pool.close();
    }
  });
});

describe('shared child vs a fresh fork per program', () => {
  let shared: SandboxPool;
  let forkEach: SandboxPool;
  beforeAll(() => {
    shared = new SandboxPool(2, { timeoutS: 2 });
    forkEach = new SandboxPool(2, { timeoutS: 2, sessionPrograms: 0 });
  });
  afterAll(async () => {
    await shared.close();
    await forkEach.close();
  });

  it('gives byte-identical records, sharing the pure programs and forking the rest', async () => {
    const progs = [...fixtures, ...generated];
    const s0 = await shared.stats();
    const a = await collect(shared, progs);
    const s1 = await shared.stats();
    const f0 = await forkEach.stats();
    const b = await collect(forkEach, progs);
    const f1 = await forkEach.stats();
    expect(a.map((r) => JSON.stringify(r))).toEqual(b.map((r) => JSON.stringify(r)));
    // generated programs define classes and import modules now and then: both paths ran
    expect(s1.shared - s0.shared).toBeGreaterThan(progs.length / 2);
    expect(s1.forked - s0.forked).toBeGreaterThan(0);
    expect(s1.shared - s0.shared + (s1.forked - s0.forked)).toBe(progs.length);
    expect(f1.shared - f0.shared).toBe(0);
    expect(f1.forked - f0.forked).toBe(progs.length);
  });

  it('keeps each program to itself: output, ids, order, across limits that end a session', async () => {
    const progs: CallRecord[] = [
      { id: 'p1', code: 'def f():\n    print("one")\n    return 1', call: 'f()' },
      { id: 'loop', code: 'def f():\n    return sum(range(10 ** 12))', call: 'f()' }, // no events: SIGALRM
      { id: 'p2', code: 'def f():\n    print("two")\n    return 2', call: 'f()' },
      { id: 'steps', code: 'def f():\n    n = 0\n    while True:\n        n += 1', call: 'f()' },
      { id: 'impure', code: 'import os\ndef f():\n    return os.getcwd() == os.path.realpath(".")', call: 'f()' },
      { id: 'p3', code: 'def f():\n    return 3', call: 'f()' },
      { id: 'syntax', code: 'def f(:\n    pass', call: 'f()' },
      { id: 'raises', code: 'def f():\n    return [][1]', call: 'f()' },
      { id: 'p4', code: 'def f():\n    return 4', call: 'f()' },
    ];
    const pool = new SandboxPool(1, { timeoutS: 1, maxEvents: 500 });
    try {
      const recs = await collect(pool, progs);
      const by = Object.fromEntries(recs.map((r) => [r.id, r]));
      expect(recs.map((r) => r.id)).toEqual(progs.map((p) => p.id));
      expect(by.p1).toMatchObject({ status: 'normal', stdout: 'one\n' });
      expect(by.p2).toMatchObject({ status: 'normal', stdout: 'two\n' });
      expect(by.p2.stderr).toBeUndefined();
      expect(by.loop).toMatchObject({ status: 'never', limit: 'timeout' });
      expect(by.steps).toMatchObject({ status: 'never', limit: 'steps' });
      expect(by.impure.status).toBe('normal');
      expect(by.syntax).toMatchObject({ status: 'error' });
      expect(by.syntax.error).toMatch(/^SyntaxError/);
      expect(by.raises.error).toBe('IndexError: list index out of range');
      for (const id of ['p3', 'p4']) expect(by[id].events.at(-1)).toMatchObject({ event: 'return', value: id.slice(1) });
      const stats = await pool.stats();
      expect(stats.forked).toBe(1); // only `impure`
    } finally {
      await pool.close();
    }
  });

  it('starts a new shared child after session_programs programs, with the same results', async () => {
    const pool = new SandboxPool(1, { sessionPrograms: 3 });
    try {
      const progs = Array.from({ length: 10 }, (_, i) => ({ id: `n${i}`, code: 'def f(n):\n    return [n] * n', call: `f(${i})` }));
      const recs = await collect(pool, progs);
      expect(recs.map((r) => r.events.at(-1)!.value)).toEqual(progs.map((_, i) => JSON.stringify(Array(i).fill(i)).replace(/,/g, ', ')));
      expect((await pool.stats()).shared).toBe(10);
    } finally {
      await pool.close();
    }
  });

  it('forks every program when its time limit is large against the shared child\'s CPU budget', async () => {
    const pool = new SandboxPool(1, { timeoutS: 40 });
    try {
      const recs = await collect(pool, fixtures.slice(0, 3));
      expect(recs.map((r) => r.status)).toEqual(['normal', 'normal', 'normal']);
      expect(await pool.stats()).toMatchObject({ shared: 0, forked: 3 });
    } finally {
      await pool.close();
    }
  });

  it('ends a shared child before its CPU budget could cut a program short, with the same results', async () => {
    // Budget 4 s, limit 1 s: a session hands a program back once 2 s of CPU are used; the 24
    // programs take ~0.2 s each here, so even a machine twice as fast gets there.
    const pool = new SandboxPool(1, { timeoutS: 1, sessionCpuS: 4 });
    try {
      const progs = Array.from({ length: 24 }, (_, i) => ({ id: `cpu${i}`, code: 'def f(n):\n    return sum(range(n)) % 7', call: `f(${10 ** 7 + i})` }));
      const recs = await collect(pool, progs);
      expect(recs.map((r) => [r.status, r.events.at(-1)!.value])).toEqual(progs.map((_, i) => ['normal', String((((10 ** 7 + i) * (10 ** 7 + i - 1)) / 2) % 7)]));
      const stats = await pool.stats();
      expect(stats.forked).toBeGreaterThan(0); // each program a session handed back
      expect(stats.shared).toBeGreaterThan(stats.forked);
    } finally {
      await pool.close();
    }
  });

  it('does not let a forked program reach the shared child through inherited descriptors', async () => {
    const pool = new SandboxPool(1, {});
    try {
      // A pure program first, so the shared child exists when the hostile one is forked.
      const before = { id: 'before', code: 'def f():\n    return 1', call: 'f()' };
      const hostile = {
        id: 'hostile',
        // A well-formed request for the next id, written to every descriptor it might have.
        code: [
          'import os, struct',
          'def f():',
          '    i, c, a = b"after0", b"def f(x):\\n    return 99", b"f(0)"',
          '    bad = struct.pack("<6I", 116, 1000, 0, len(i), len(c), len(a)) + i + c + a',
          '    for fd in range(3, 64):',
          '        try:',
          '            os.write(fd, bad)',
          '        except OSError:',
          '            pass',
          '    return 0',
        ].join('\n'),
        call: 'f()',
      };
      const after = Array.from({ length: 5 }, (_, i) => ({ id: `after${i}`, code: 'def f(x):\n    return x + 1', call: `f(${i})` }));
      const recs = await collect(pool, [before, hostile, ...after]);
      expect(recs.map((r) => r.id)).toEqual(['before', 'hostile', ...after.map((p) => p.id)]);
      // Its junk on the result pipe (reachable by design) only spoils its own record.
      expect(recs[1]).toMatchObject({ status: 'error', limit: 'sandbox' });
      for (const [i, r] of recs.slice(2).entries()) expect(r).toMatchObject({ status: 'normal', events: expect.arrayContaining([expect.objectContaining({ event: 'return', value: String(i + 1), depth: 0 })]) });
    } finally {
      await pool.close();
    }
  });

  it('seeds random when a program imports it, the same every run', async () => {
    const prog = { id: 'rnd', code: 'import random\ndef f():\n    return random.random()', call: 'f()' };
    const [a, b] = await collect(shared, [prog, { ...prog, id: 'rnd2' }]);
    const py = spawnSync('python3', ['-c', 'import random; random.seed(0); print(repr(random.random()))'], { encoding: 'utf8' }).stdout.trim();
    expect(a.events.at(-1)!.value).toBe(py);
    expect(b.events.at(-1)!.value).toBe(py);
  });
});

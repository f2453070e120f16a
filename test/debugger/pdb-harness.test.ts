import { PdbJob, PdbStop, runPdbHarness } from '../../src/debugger/pdb';

const CODE = ['def sq(x):', '    return x * x', '', 'def f(a):', '    s = sq(a) + sq(a + 1)', '    t = 1 // (s - s)', '    return t'].join('\n');
// CONTEXT lines: 1 def sq, 2 return x * x, 4 def f, 5 s = ..., 6 t = ..., 7 return t, 9 def main, 10 return f(2)

function job(scripts: string[][], extra: Partial<PdbJob> = {}): PdbJob {
  return { id: 'p', code: CODE, entry_call: 'f(2)', limit: null, count: false, timeout: 20, scripts, ...extra };
}

const brief = (s: unknown) => {
  const x = s as PdbStop & { kind?: string };
  return x.event === 'exit' ? `exit ${x.kind}` : `${x.event} ${x.line} d${x.depth}`;
};

describe('pdb harness', () => {
  test('the first stop is main’s call; step at main’s return leaves pdb (exit), not into harness code', async () => {
    const steps = Array.from({ length: 40 }, () => 'step');
    const [r] = await runPdbHarness([job([steps], { code: CODE.replace('1 // (s - s)', 's') })]);
    const stops = r.runs[0].stops.map(brief);
    expect(stops[0]).toBe('call 9 d0');
    expect(stops.slice(-3)).toEqual(['return 7 d1', 'return 10 d0', 'exit normal']);
  });

  test('exact stops of next/return around a call and an exception', async () => {
    const [r] = await runPdbHarness([job([['step', 'step', 'step', 'step', 'step', 'return', 'next', 'return', 'next', 'next', 'next', 'next']])]);
    expect(r.runs[0].stops.map(brief)).toEqual([
      'call 9 d0',
      'line 10 d0',
      'call 4 d1',
      'line 5 d1',
      'call 1 d2', // sq(a)
      'line 2 d2',
      'return 2 d2', // `return` from sq(a)'s line
      'call 1 d2', // `next` at a return stop behaves like `step`: sq(a + 1)
      'return 2 d2', // `return`
      'line 6 d1', // `next` at a return: step, back in f
      'exception 6 d1', // `next` stops at the exception event
      'return 6 d1', // then at f's return (left by the exception)
      'exception 10 d0', // next at a return steps: main's exception
    ]);
    const ret = r.runs[0].stops[11] as PdbStop;
    expect(ret.value).toBe('None');
    expect(ret.locals).toEqual({ a: '2', s: '13' }); // no __return__/__exception__ from pdb
  });

  test('breakpoints do not leak from one run into the next (bdb keeps them class-global)', async () => {
    const [r] = await runPdbHarness([job([['tbreak 6'], ['continue'], ['tbreak 6', 'continue', 'continue']])]);
    expect(r.runs[0].stops.map(brief)).toEqual(['call 9 d0']);
    expect(r.runs[1].stops.map(brief)).toEqual(['call 9 d0', 'exit error']);
    expect(r.runs[2].stops.map(brief)).toEqual(['call 9 d0', 'line 6 d1', 'exit error']);
  });

  test('counting mode gives trace indices and stops a truncated run at its limit; hung runs are killed', async () => {
    const loop = 'def f(x):\n    while x > 0:\n        x = x + 1\n    return x\n';
    const [r] = await runPdbHarness([
      job([['step', 'step', 'step', 'step'], ['continue'], ['tbreak 4', 'continue']], { code: loop, entry_call: 'f(1)', limit: 100 }),
    ]);
    expect(r.runs[0].stops.map((s) => (s as PdbStop).ordinal)).toEqual([0, 1, 2, 3, 4]);
    expect(r.runs[1].stops.map(brief)).toEqual(['call 6 d0', 'exit never']);
    expect(r.runs[2].stops.map(brief)).toEqual(['call 6 d0', 'exit never']);
    const [h] = await runPdbHarness([job([['continue']], { code: loop, entry_call: 'f(1)', timeout: 1 })]);
    expect(h.runs[0].failure).toBe('timeout');
  });
});

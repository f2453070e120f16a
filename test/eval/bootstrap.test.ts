import { bootstrapRate, groupByProgram } from '../../src/eval/bootstrap';

describe('bootstrap over programs', () => {
  it('gives [100, 100] when every task is right and [0, 0] when none is', () => {
    expect(bootstrapRate([[3, 3], [1, 1], [2, 2]])).toEqual({ lo: 1, hi: 1, programs: 3 });
    expect(bootstrapRate([[0, 3], [0, 1]])).toEqual({ lo: 0, hi: 0, programs: 2 });
  });

  it('contains the point estimate and narrows with more programs', () => {
    const few = Array.from({ length: 10 }, (_, i): [number, number] => [i % 2, 1]);
    const many = Array.from({ length: 400 }, (_, i): [number, number] => [i % 2, 1]);
    const a = bootstrapRate(few);
    const b = bootstrapRate(many);
    for (const r of [a, b]) {
      expect(r.lo).toBeLessThanOrEqual(0.5);
      expect(r.hi).toBeGreaterThanOrEqual(0.5);
    }
    expect(b.hi - b.lo).toBeLessThan(a.hi - a.lo);
    // 400 coin flips: the 95% interval is about ±5 points.
    expect(b.hi - b.lo).toBeGreaterThan(0.06);
    expect(b.hi - b.lo).toBeLessThan(0.14);
  });

  it('resamples programs, not tasks: one program with many tasks stays one draw', () => {
    // Two programs, one all right (100 tasks), one all wrong (100 tasks): each resample holds
    // 0, 1 or 2 copies of the right one, so the rate is 0, 0.5 or 1 and the interval is wide.
    const r = bootstrapRate([[100, 100], [0, 100]]);
    expect(r.lo).toBe(0);
    expect(r.hi).toBe(1);
  });

  it('is deterministic in the seed', () => {
    const g = Array.from({ length: 50 }, (_, i): [number, number] => [i % 3 === 0 ? 1 : 0, 1]);
    expect(JSON.stringify(bootstrapRate(g, { seed: 7 }))).toBe(JSON.stringify(bootstrapRate(g, { seed: 7 })));
    expect(JSON.stringify(bootstrapRate(g, { seed: 7 }))).not.toBe(JSON.stringify(bootstrapRate(g, { seed: 8 })));
  });

  it('groups items per program', () => {
    const g = groupByProgram([{ p: 'a', ok: true }, { p: 'b', ok: false }, { p: 'a', ok: false }], (x) => x.p, (x) => x.ok);
    expect(g).toEqual([[1, 2], [0, 1]]);
  });
});

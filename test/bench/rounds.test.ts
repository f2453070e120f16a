import { compareWithBest, judgeRounds, MAX_ROUND_RATIO, type Figure } from '../../bench/rounds';

const fig = (framework: string, rounds: number[]): Figure => {
  const sorted = [...rounds].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const tokensPerS = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { framework, tokensPerS, rounds, verdict: judgeRounds(rounds) };
};

describe('judgeRounds', () => {
  it('refuses the recorded 2.93× peer (10349 and 5381 tokens/s) and says by how much', () => {
    const v = judgeRounds([10349, 5381]);
    expect(v.maxOverMin).toBeCloseTo(10349 / 5381, 3);
    expect(v.refused).toBe('rounds differ by ×1.92 (10349 vs 5381 tokens/s, the slowest 48% below the fastest; limit ×1.25)');
  });

  it('accepts rounds within the limit, the limit itself included, in any order', () => {
    expect(judgeRounds([8000, 9000, 8500])).toEqual({ maxOverMin: 1.125 });
    expect(judgeRounds([1000, 1000 * MAX_ROUND_RATIO]).refused).toBeUndefined();
    expect(judgeRounds([1000, 1251]).refused).toMatch(/×1\.25 \(1251 vs 1000/);
  });

  it('cannot judge one round, and refuses a round with no valid figure', () => {
    expect(judgeRounds([7000])).toEqual({ maxOverMin: null, unchecked: expect.stringMatching(/one round/) });
    expect(judgeRounds([7000, NaN]).refused).toMatch(/no valid tokens\/s/);
    expect(judgeRounds([7000, 0]).refused).toMatch(/no valid tokens\/s/);
  });
});

describe('compareWithBest', () => {
  const ndbg = fig('ndbg/tensorflow', [8300, 8400]);

  it('divides by the fastest accepted peer', () => {
    const c = compareWithBest(ndbg, [fig('pytorch eager 2t', [7200, 7300]), fig('pytorch compile 2t', [9700, 9800]), fig('pytorch compile 1t', [6000, 6100])]);
    expect(c).toEqual({ best: 'pytorch compile 2t', bestTokensPerS: 9750, ratio: +(8350 / 9750).toFixed(3) });
  });

  it('refuses when ndbg\'s own rounds disagree', () => {
    const c = compareWithBest(fig('ndbg/tensorflow', [6000, 9000]), [fig('pytorch sdpa 2t', [7000, 7100])]);
    expect(c).toEqual({ refused: expect.stringMatching(/^ndbg\/tensorflow: rounds differ by ×1\.50/) });
  });

  it('refuses when a refused peer might be faster than the accepted best, not when it cannot be', () => {
    const noisyFast = fig('pytorch compile 2t', [12000, 6000]);
    expect(compareWithBest(ndbg, [fig('pytorch eager 2t', [7200, 7300]), noisyFast])).toEqual({
      refused: expect.stringMatching(/^pytorch compile 2t may be the fastest peer \(a round at 12000 > pytorch eager 2t's 7250\)/),
    });
    const noisySlow = fig('pytorch eager 1t', [4000, 2000]);
    expect(compareWithBest(ndbg, [fig('pytorch eager 2t', [7200, 7300]), noisySlow])).toMatchObject({ best: 'pytorch eager 2t', ratio: 1.152 });
  });

  it('refuses with no accepted peer, and notes a single unchecked round', () => {
    expect(compareWithBest(ndbg, [])).toEqual({ refused: 'no peer measured' });
    expect(compareWithBest(ndbg, [fig('p', [5000, 9000])])).toEqual({ refused: expect.stringMatching(/^every peer refused \(p: rounds differ/) });
    expect(compareWithBest(fig('ndbg/tensorflow', [8000]), [fig('p', [4000])])).toEqual({
      best: 'p', bestTokensPerS: 4000, ratio: 2, note: expect.stringMatching(/^ndbg\/tensorflow: one round.*; p: one round/),
    });
  });
});

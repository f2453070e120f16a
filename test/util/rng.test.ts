import { Rng } from '../../src/util/rng';

describe('Rng', () => {
  it('gives the same stream for the same seed and keys, and different ones otherwise', () => {
    const draw = (r: Rng) => Array.from({ length: 5 }, () => r.nextU32());
    expect(draw(Rng.from(7, 'prog-1'))).toEqual(draw(Rng.from(7, 'prog-1')));
    expect(draw(Rng.from(7, 'prog-1'))).not.toEqual(draw(Rng.from(7, 'prog-2')));
    expect(draw(Rng.from(7, 'prog-1'))).not.toEqual(draw(Rng.from(8, 'prog-1')));
    // Keys are not concatenated blindly: ("ab","c") and ("a","bc") are different streams.
    expect(draw(Rng.from(1, 'ab', 'c'))).not.toEqual(draw(Rng.from(1, 'a', 'bc')));
  });

  it('restores exactly from a serialized state', () => {
    const r = Rng.from(3);
    for (let i = 0; i < 10; i++) r.next();
    const copy = Rng.fromState(JSON.parse(JSON.stringify(r.state())));
    expect(Array.from({ length: 20 }, () => copy.next())).toEqual(Array.from({ length: 20 }, () => r.next()));
  });

  it('draws uniform floats in [0,1) and weighted indices in proportion', () => {
    const r = Rng.from(11);
    const counts = [0, 0, 0];
    let min = 1;
    let max = 0;
    for (let i = 0; i < 30000; i++) {
      const x = r.next();
      min = Math.min(min, x);
      max = Math.max(max, x);
      counts[r.weighted([1, 2, 7])]++;
    }
    expect(min).toBeGreaterThanOrEqual(0);
    expect(max).toBeLessThan(1);
    expect(counts[0] / 30000).toBeCloseTo(0.1, 1);
    expect(counts[2] / 30000).toBeCloseTo(0.7, 1);
    expect(() => r.weighted([0, 0])).toThrow(/positive sum/);
  });

  it('shuffles into a permutation', () => {
    const xs = Rng.from(5).shuffle(Array.from({ length: 50 }, (_, i) => i));
    expect([...xs].sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(xs).not.toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});

import { bootstrapLaw, CHINCHILLA_STARTS, fitLaw, huberObjective, initialGrid, predictLoss, type Law, type Point } from '../../src/scaling/law';

/**
 * The CLI starts from Hoffmann et al.'s 4,500 points (a few seconds in node); under jest the
 * same arithmetic runs ~20× slower, so these tests use a 72-point sub-grid of it (the fit's
 * correctness does not depend on the grid's density once one start reaches the basin).
 */
const STARTS = initialGrid({ alpha: [0.5, 1], beta: [0.5, 1], e: [0, 0.5], a: [5, 10, 15], b: [5, 10, 15] });
import { lbfgs } from '../../src/scaling/lbfgs';
import { approach2, fitSlice } from '../../src/scaling/isoflop';
import { allocationExponents, computeOptimal, fitFlopsModel } from '../../src/scaling/frontier';
import { Rng } from '../../src/util/rng';

/** Losses drawn from a known law with multiplicative noise σ (a seeded Gaussian on ln L). */
function synthetic(law: Law, Ns: number[], Ds: number[], sigma: number, seed: number): Point[] {
  const rng = Rng.from(seed, 'synthetic-law');
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rng.next())) * Math.cos(2 * Math.PI * rng.next());
  return Ns.flatMap((N) => Ds.map((D) => ({ N, D, loss: predictLoss(law, N, D) * Math.exp(sigma * gauss()) })));
}

describe('L-BFGS', () => {
  test('minimises the Rosenbrock function from the usual start', () => {
    const r = lbfgs((x, g) => {
      g[0] = -2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2);
      g[1] = 200 * (x[1] - x[0] ** 2);
      return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2;
    }, [-1.2, 1]);
    expect(r.x[0]).toBeCloseTo(1, 5);
    expect(r.x[1]).toBeCloseTo(1, 5);
  });

  test('the Huber objective\'s gradient matches finite differences', () => {
    const pts = synthetic({ E: 1.7, A: 400, B: 400, alpha: 0.34, beta: 0.28 }, [1e6, 1e7], [1e8, 1e9, 1e10], 0.02, 1);
    const f = huberObjective(pts);
    const x = Float64Array.from([6.1, 5.8, 0.4, 0.3, 0.25]);
    const g = new Float64Array(5);
    f(x, g);
    for (let i = 0; i < 5; i++) {
      const h = 1e-6;
      const xp = Float64Array.from(x);
      const xm = Float64Array.from(x);
      xp[i] += h;
      xm[i] -= h;
      const fd = (f(xp, new Float64Array(5)) - f(xm, new Float64Array(5))) / (2 * h);
      expect(Math.abs(fd - g[i])).toBeLessThan(1e-6 * Math.max(1, Math.abs(g[i])));
    }
  });
});

describe('Chinchilla approach 3', () => {
  // Chinchilla's published law, on a ladder shaped like a real one: 6 sizes × 6 token budgets.
  const truth: Law = { E: 1.69, A: 406.4, B: 410.7, alpha: 0.34, beta: 0.28 };
  const Ns = [5e7, 1e8, 2e8, 4e8, 8e8, 1.6e9];
  const Ds = [1e9, 2e9, 5e9, 1e10, 2e10, 5e10];

  test('recovers the parameters from noiseless losses (to 1e-3 relative)', () => {
    const fit = fitLaw(synthetic(truth, Ns, Ds, 0, 0), STARTS);
    for (const k of ['E', 'A', 'B', 'alpha', 'beta'] as const) expect(Math.abs(fit.law[k] / truth[k] - 1)).toBeLessThan(1e-3);
    expect(initialGrid().length).toBe(4500);
    expect(CHINCHILLA_STARTS.alpha).toEqual([0, 0.5, 1, 1.5, 2]);
    expect(CHINCHILLA_STARTS.a).toEqual([0, 5, 10, 15, 20, 25]);
  });

  test('with 0.5% noise: α and β within 0.05, E within 6% (the asymptote is the least determined), and the 95% bootstrap intervals cover the truth', () => {
    const pts = synthetic(truth, Ns, Ds, 0.005, 7);
    const fit = fitLaw(pts, STARTS);
    expect(Math.abs(fit.law.alpha - truth.alpha)).toBeLessThan(0.05);
    expect(Math.abs(fit.law.beta - truth.beta)).toBeLessThan(0.05);
    expect(Math.abs(fit.law.E / truth.E - 1)).toBeLessThan(0.06);
    const boot = bootstrapLaw(pts, fit, { samples: 60, seed: 3, seedStarts: 4 });
    for (const k of ['alpha', 'beta', 'E'] as const) {
      expect(boot.ci[k].lo).toBeLessThanOrEqual(truth[k]);
      expect(boot.ci[k].hi).toBeGreaterThanOrEqual(truth[k]);
    }
    // Deterministic: the same seed gives the same intervals.
    expect(bootstrapLaw(pts, fit, { samples: 60, seed: 3, seedStarts: 4 }).ci).toEqual(boot.ci);
    // Predicting a held-out point (the largest N and D) lands within 1%.
    const fit2 = fitLaw(pts.filter((p) => !(p.N === 1.6e9 && p.D === 5e10)), STARTS);
    expect(Math.abs(predictLoss(fit2.law, 1.6e9, 5e10) / predictLoss(truth, 1.6e9, 5e10) - 1)).toBeLessThan(0.01);
  }, 60_000);

  test('an outlier barely moves the Huber fit', () => {
    const pts = synthetic(truth, Ns, Ds, 0.002, 9);
    pts[10] = { ...pts[10], loss: pts[10].loss * 1.3 };
    const fit = fitLaw(pts, STARTS);
    expect(Math.abs(fit.law.alpha - truth.alpha)).toBeLessThan(0.03);
    expect(Math.abs(fit.law.beta - truth.beta)).toBeLessThan(0.03);
  });
});

describe('compute-optimal allocation and approach 2', () => {
  const law: Law = { E: 1.69, A: 406.4, B: 410.7, alpha: 0.34, beta: 0.28 };

  test('with FLOPs per token 6N the numeric optimum is Chinchilla\'s closed form', () => {
    const fm = fitFlopsModel([1e6, 1e7, 1e8].map((N) => ({ N, flopsPerToken: 6 * N })));
    expect(fm.p).toBeCloseTo(1, 10);
    expect(fm.k).toBeCloseTo(6, 8);
    const { a } = allocationExponents(law);
    const G = ((law.alpha * law.A) / (law.beta * law.B)) ** (1 / (law.alpha + law.beta));
    for (const C of [1e18, 1e21, 1e24]) {
      const opt = computeOptimal(law, fm, C);
      expect(opt.N / (G * (C / 6) ** a) - 1).toBeLessThan(1e-6);
      expect(opt.N * opt.D * 6).toBeCloseTo(C, -Math.log10(C) + 6);
    }
  });

  test('iso-FLOP parabolas find the minimum of a law along each slice, and say when there is none', () => {
    const fpt = (N: number) => 6 * N;
    const slices = [1e18, 1e19, 1e20].map((C) => {
      const opt = computeOptimal(law, fitFlopsModel([{ N: 1e6, flopsPerToken: 6e6 }, { N: 1e9, flopsPerToken: 6e9 }]), C);
      const Ns = [0.25, 0.5, 1, 2, 4].map((f) => opt.N * f);
      return { C, opt, points: Ns.map((N) => ({ N, loss: predictLoss(law, N, C / fpt(N)), flopsPerToken: fpt(N) })) };
    });
    const a2 = approach2(slices);
    slices.forEach((s, i) => expect(Math.abs(Math.log(a2.slices[i].minimum!.N / s.opt.N))).toBeLessThan(0.1));
    expect(a2.nOpt!.a).toBeCloseTo(allocationExponents(law).a, 1);
    // All sizes on one side of the minimum: reported, not extrapolated.
    const one = slices[0];
    const left = fitSlice(one.C, [0.05, 0.1, 0.2].map((f) => ({ N: one.opt.N * f, loss: predictLoss(law, one.opt.N * f, one.C / fpt(one.opt.N * f)), flopsPerToken: fpt(one.opt.N * f) })));
    expect(left.minimum).toBeUndefined();
    expect(left.note).toMatch(/outside the sizes trained/);
  });
});

import { Rng } from '../util/rng';
import { lbfgs } from './lbfgs';

/**
 * Chinchilla's approach 3 (Hoffmann et al. 2022, §3.3 and appendix D.2), as the replication
 * (Besiroglu et al. 2024) redid it: L(N, D) = E + A/N^α + B/D^β, fitted as
 *   min over (a, b, e, α, β) of Σ_i Huber_δ( LSE(a − α·ln N_i, b − β·ln D_i, e) − ln L_i ),
 * with A = e^a, B = e^b, E = e^e, δ = 1e-3, L-BFGS from every point of a grid of initial values
 * (α, β ∈ {0, 0.5, …, 2}, e ∈ {−1, −0.5, …, 1}, a, b ∈ {0, 5, …, 25}), keeping the best.
 * Intervals: refit on bootstrap resamples of the points (with replacement), percentile intervals.
 */
export interface Point {
  N: number;
  D: number;
  loss: number;
}

export interface Law {
  E: number;
  A: number;
  B: number;
  alpha: number;
  beta: number;
}

export const HUBER_DELTA = 1e-3;

export function predictLoss(law: Law, N: number, D: number): number {
  return law.E + law.A / N ** law.alpha + law.B / D ** law.beta;
}

const toLaw = (x: ArrayLike<number>): Law => ({ A: Math.exp(x[0]), B: Math.exp(x[1]), E: Math.exp(x[2]), alpha: x[3], beta: x[4] });

/** The objective over x = (a, b, e, α, β) and its gradient, for fixed points. */
export function huberObjective(points: Point[], delta = HUBER_DELTA): (x: Float64Array, g: Float64Array) => number {
  const n = points.length;
  const lnN = Float64Array.from(points, (p) => Math.log(p.N));
  const lnD = Float64Array.from(points, (p) => Math.log(p.D));
  const lnL = Float64Array.from(points, (p) => Math.log(p.loss));
  // Called millions of times per fit (thousands of starts): plain indexed loops, no allocation.
  return (x, g) => {
    const a = x[0];
    const b = x[1];
    const e = x[2];
    const al = x[3];
    const be = x[4];
    let g0 = 0;
    let g1 = 0;
    let g2 = 0;
    let g3 = 0;
    let g4 = 0;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const u1 = a - al * lnN[i];
      const u2 = b - be * lnD[i];
      const mx = u1 > u2 ? (u1 > e ? u1 : e) : u2 > e ? u2 : e;
      const w1 = Math.exp(u1 - mx);
      const w2 = Math.exp(u2 - mx);
      const w3 = Math.exp(e - mx);
      const z = w1 + w2 + w3;
      const r = mx + Math.log(z) - lnL[i];
      const ar = r < 0 ? -r : r;
      let dr: number;
      if (ar <= delta) {
        total += 0.5 * r * r;
        dr = r;
      } else {
        total += delta * (ar - 0.5 * delta);
        dr = r < 0 ? -delta : delta;
      }
      const k = dr / z;
      g0 += k * w1;
      g1 += k * w2;
      g2 += k * w3;
      g3 -= k * w1 * lnN[i];
      g4 -= k * w2 * lnD[i];
    }
    g[0] = g0;
    g[1] = g1;
    g[2] = g2;
    g[3] = g3;
    g[4] = g4;
    return total;
  };
}

const range = (lo: number, hi: number, step: number) => Array.from({ length: Math.round((hi - lo) / step) + 1 }, (_, i) => lo + i * step);

export interface StartGrid {
  a: number[];
  b: number[];
  e: number[];
  alpha: number[];
  beta: number[];
}

/** Hoffmann et al.'s grid of initial values (4,500 points). */
export const CHINCHILLA_STARTS: StartGrid = { alpha: range(0, 2, 0.5), beta: range(0, 2, 0.5), e: range(-1, 1, 0.5), a: range(0, 25, 5), b: range(0, 25, 5) };

/** Every combination of a grid, as (a, b, e, α, β). */
export function initialGrid(grid: StartGrid = CHINCHILLA_STARTS): number[][] {
  const out: number[][] = [];
  for (const al of grid.alpha) for (const be of grid.beta) for (const e of grid.e) for (const a of grid.a) for (const b of grid.b) out.push([a, b, e, al, be]);
  return out;
}

export interface FitResult {
  law: Law;
  objective: number;
  /** The starting points ranked best first (reused to seed the bootstrap refits). */
  rankedStarts: number[][];
  starts: number;
}

export function fitLaw(points: Point[], starts: number[][] = initialGrid(), delta = HUBER_DELTA): FitResult {
  if (points.length < 5) throw new Error(`the law has 5 parameters; need at least 5 points, got ${points.length}`);
  const f = huberObjective(points, delta);
  const results = starts.map((s) => {
    const r = lbfgs(f, s, { maxIterations: 2000 });
    return { start: s, x: r.x, f: r.f };
  });
  // Ties (many starts reach the same optimum) resolve to the earliest start: deterministic.
  const ranked = results.map((r, i) => ({ ...r, i })).filter((r) => Number.isFinite(r.f)).sort((p, q) => p.f - q.f || p.i - q.i);
  if (ranked.length === 0) throw new Error('no starting point gave a finite objective');
  return { law: toLaw(ranked[0].x), objective: ranked[0].f, rankedStarts: ranked.map((r) => r.start), starts: starts.length };
}

export interface Interval {
  lo: number;
  hi: number;
}

export interface BootstrapResult {
  samples: Law[];
  ci: Record<keyof Law, Interval>;
  level: number;
}

export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

export function percentileInterval(values: number[], level: number): Interval {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return { lo: quantile(s, (1 - level) / 2), hi: quantile(s, 1 - (1 - level) / 2) };
}

/**
 * Bootstrap over points: `samples` resamples with replacement (seeded), each refitted from the
 * full fit's optimum and its `seedStarts` best grid starts (the full grid per resample would
 * cost thousands of fits each for the same optimum in practice).
 */
export function bootstrapLaw(points: Point[], full: FitResult, o: { samples: number; seed: number; seedStarts?: number; level?: number }): BootstrapResult {
  const rng = Rng.from(o.seed, 'scaling-bootstrap');
  const base = full.law;
  const starts = [[Math.log(base.A), Math.log(base.B), Math.log(base.E), base.alpha, base.beta], ...full.rankedStarts.slice(0, o.seedStarts ?? 24)];
  const samples: Law[] = [];
  for (let s = 0; s < o.samples; s++) {
    const resample = Array.from({ length: points.length }, () => points[rng.int(points.length)]);
    samples.push(fitLaw(resample, starts).law);
  }
  const level = o.level ?? 0.95;
  const keys: Array<keyof Law> = ['E', 'A', 'B', 'alpha', 'beta'];
  const ci = Object.fromEntries(keys.map((k) => [k, percentileInterval(samples.map((l) => l[k]), level)])) as Record<keyof Law, Interval>;
  return { samples, ci, level };
}

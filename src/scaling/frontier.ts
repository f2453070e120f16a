import { predictLoss, type Law } from './law';

/**
 * "For a compute budget C, which (N, D) and what loss". Compute is counted as the cells count it
 * (tokens × the train FLOPs per token of `ndbg model info`), so a prediction is in the same units
 * as the sweep's budgets. FLOPs per token is a property of an architecture, not of N alone; across
 * a ladder it is fitted as f(N) = k·N^p (least squares in log-log over the sizes). Then
 * D = C / f(N) and L(N, C/f(N)) is convex in ln N, so a golden-section search finds N_opt.
 * Chinchilla's own closed form under C = 6ND is given beside it (`allocationExponents`).
 */
export interface FlopsModel {
  k: number;
  p: number;
}

export function fitFlopsModel(sizes: Array<{ N: number; flopsPerToken: number }>): FlopsModel {
  const xs = sizes.map((s) => Math.log(s.N));
  const ys = sizes.map((s) => Math.log(s.flopsPerToken));
  const n = xs.length;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (xs[i] - mx) ** 2;
    sxy += (xs[i] - mx) * (ys[i] - my);
  }
  const p = sxx > 0 ? sxy / sxx : 1;
  return { k: Math.exp(my - p * mx), p };
}

export const flopsPerToken = (m: FlopsModel, N: number) => m.k * N ** m.p;

export interface Allocation {
  C: number;
  N: number;
  D: number;
  loss: number;
}

export function computeOptimal(law: Law, fm: FlopsModel, C: number): Allocation {
  const lossAt = (lnN: number) => {
    const N = Math.exp(lnN);
    return predictLoss(law, N, C / flopsPerToken(fm, N));
  };
  // Bracket: from 1 parameter to where D would be a single token.
  let lo = 0;
  let hi = Math.log(C) / Math.max(fm.p, 1e-6) + 5;
  const phi = (Math.sqrt(5) - 1) / 2;
  let x1 = hi - phi * (hi - lo);
  let x2 = lo + phi * (hi - lo);
  let f1 = lossAt(x1);
  let f2 = lossAt(x2);
  for (let i = 0; i < 200 && hi - lo > 1e-9; i++) {
    if (f1 < f2) {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - phi * (hi - lo);
      f1 = lossAt(x1);
    } else {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + phi * (hi - lo);
      f2 = lossAt(x2);
    }
  }
  const N = Math.exp((lo + hi) / 2);
  const D = C / flopsPerToken(fm, N);
  return { C, N, D, loss: predictLoss(law, N, D) };
}

/** Under C = 6ND: N_opt ∝ C^a, D_opt ∝ C^b with a = β/(α+β), b = α/(α+β) (Chinchilla eq. 4). */
export function allocationExponents(law: Law): { a: number; b: number } {
  return { a: law.beta / (law.alpha + law.beta), b: law.alpha / (law.alpha + law.beta) };
}

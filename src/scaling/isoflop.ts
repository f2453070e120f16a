/**
 * Chinchilla's approach 2: for each FLOP budget with at least three sizes, a parabola of loss in
 * ln N; its vertex, when it lies inside the sizes trained, is N_opt(C). Across budgets with a
 * minimum, ln N_opt = ln k + a·ln C by least squares (and D_opt = C / flops per token at N_opt).
 * A slice whose parabola opens downwards or whose vertex falls outside the sizes is reported as
 * having no minimum, never extrapolated.
 */
export interface SlicePoint {
  N: number;
  loss: number;
  flopsPerToken: number;
}

export interface SliceFit {
  C: number;
  points: number;
  /** y = c2·x² + c1·x + c0 with x = ln N. */
  coef?: [number, number, number];
  minimum?: { N: number; D: number; loss: number };
  note?: string;
}

export interface Approach2 {
  slices: SliceFit[];
  /** N_opt = k·C^a over the slices with a minimum (needs two). */
  nOpt?: { k: number; a: number };
  dOpt?: { k: number; b: number };
}

function solve3(m: number[][], v: number[]): number[] | undefined {
  const a = m.map((row, i) => [...row, v[i]]);
  for (let c = 0; c < 3; c++) {
    let p = c;
    for (let r = c + 1; r < 3; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
    if (Math.abs(a[p][c]) < 1e-300) return undefined;
    [a[c], a[p]] = [a[p], a[c]];
    for (let r = 0; r < 3; r++) {
      if (r === c) continue;
      const f = a[r][c] / a[c][c];
      for (let k = c; k < 4; k++) a[r][k] -= f * a[c][k];
    }
  }
  return [a[0][3] / a[0][0], a[1][3] / a[1][1], a[2][3] / a[2][2]];
}

export function fitSlice(C: number, pts: SlicePoint[]): SliceFit {
  if (pts.length < 3) return { C, points: pts.length, note: `${pts.length} sizes (a parabola needs 3)` };
  const xs = pts.map((p) => Math.log(p.N));
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  // Centred x keeps the normal equations well conditioned.
  const S = [0, 0, 0, 0, 0];
  const T = [0, 0, 0];
  pts.forEach((p, i) => {
    const x = xs[i] - mean;
    for (let k = 0; k < 5; k++) S[k] += x ** k;
    for (let k = 0; k < 3; k++) T[k] += p.loss * x ** k;
  });
  const sol = solve3([[S[4], S[3], S[2]], [S[3], S[2], S[1]], [S[2], S[1], S[0]]], [T[2], T[1], T[0]]);
  if (!sol) return { C, points: pts.length, note: 'degenerate sizes' };
  const [c2, c1, c0] = sol;
  // Back to uncentred coefficients: y = c2(x−m)² + c1(x−m) + c0.
  const coef: [number, number, number] = [c2, c1 - 2 * c2 * mean, c2 * mean * mean - c1 * mean + c0];
  if (!(c2 > 0)) return { C, points: pts.length, coef, note: 'the loss is not convex in ln N here (no minimum)' };
  const xv = mean - c1 / (2 * c2);
  if (xv < Math.min(...xs) || xv > Math.max(...xs)) return { C, points: pts.length, coef, note: 'the minimum lies outside the sizes trained' };
  const N = Math.exp(xv);
  // FLOPs per token at N_opt: interpolated in log-log between the slice's sizes.
  const sorted = pts.map((p, i) => ({ x: xs[i], f: Math.log(p.flopsPerToken) })).sort((a, b) => a.x - b.x);
  let j = 0;
  while (j < sorted.length - 2 && sorted[j + 1].x < xv) j++;
  const t = (xv - sorted[j].x) / (sorted[j + 1].x - sorted[j].x || 1);
  const fpt = Math.exp(sorted[j].f + t * (sorted[j + 1].f - sorted[j].f));
  return { C, points: pts.length, coef, minimum: { N, D: C / fpt, loss: c2 * (xv - mean) ** 2 + c1 * (xv - mean) + c0 } };
}

function powerFit(xs: number[], ys: number[]): { k: number; e: number } {
  const lx = xs.map(Math.log);
  const ly = ys.map(Math.log);
  const mx = lx.reduce((a, b) => a + b, 0) / lx.length;
  const my = ly.reduce((a, b) => a + b, 0) / ly.length;
  let sxx = 0;
  let sxy = 0;
  for (let i = 0; i < lx.length; i++) {
    sxx += (lx[i] - mx) ** 2;
    sxy += (lx[i] - mx) * (ly[i] - my);
  }
  const e = sxy / sxx;
  return { k: Math.exp(my - e * mx), e };
}

export function approach2(slices: Array<{ C: number; points: SlicePoint[] }>): Approach2 {
  const fits = slices.map((s) => fitSlice(s.C, s.points));
  const withMin = fits.filter((f) => f.minimum);
  const out: Approach2 = { slices: fits };
  if (withMin.length >= 2 && new Set(withMin.map((f) => f.C)).size >= 2) {
    const n = powerFit(withMin.map((f) => f.C), withMin.map((f) => f.minimum!.N));
    const d = powerFit(withMin.map((f) => f.C), withMin.map((f) => f.minimum!.D));
    out.nOpt = { k: n.k, a: n.e };
    out.dOpt = { k: d.k, b: d.e };
  }
  return out;
}

/**
 * Limited-memory BFGS (Nocedal & Wright, Numerical Optimization, algorithm 7.4/7.5) with a
 * backtracking Armijo line search. Small and dependency-free: the scaling fit has five
 * parameters and tens of points, and runs it from thousands of starting points.
 */
export type Objective = (x: Float64Array, grad: Float64Array) => number;

export interface LbfgsOptions {
  maxIterations?: number;
  /** History pairs kept. */
  memory?: number;
  /** Stop when the gradient's max-norm is below this. */
  gradTolerance?: number;
  /** Stop after three iterations that each lower f by less than this (relative to max(|f|, 1)). */
  fTolerance?: number;
}

export interface LbfgsResult {
  x: Float64Array;
  f: number;
  iterations: number;
  converged: boolean;
}

const dot = (a: Float64Array, b: Float64Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const maxAbs = (a: Float64Array) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

export function lbfgs(f: Objective, x0: ArrayLike<number>, o: LbfgsOptions = {}): LbfgsResult {
  const n = x0.length;
  const maxIt = o.maxIterations ?? 1000;
  const m = o.memory ?? 10;
  const gTol = o.gradTolerance ?? 1e-12;
  const fTol = o.fTolerance ?? 1e-14;
  let x = Float64Array.from(x0);
  let g = new Float64Array(n);
  let fx = f(x, g);
  const S: Float64Array[] = [];
  const Y: Float64Array[] = [];
  const rho: number[] = [];
  const d = new Float64Array(n);
  const xNew = new Float64Array(n);
  const gNew = new Float64Array(n);
  const xTry = new Float64Array(n);
  const gTry = new Float64Array(n);
  let stalled = 0;
  let it = 0;
  if (!Number.isFinite(fx)) return { x, f: fx, iterations: 0, converged: false };
  for (; it < maxIt; it++) {
    if (maxAbs(g) < gTol) return { x, f: fx, iterations: it, converged: true };
    // Two-loop recursion: d = -H g.
    d.set(g);
    const alpha = new Array<number>(S.length);
    for (let k = S.length - 1; k >= 0; k--) {
      alpha[k] = rho[k] * dot(S[k], d);
      for (let i = 0; i < n; i++) d[i] -= alpha[k] * Y[k][i];
    }
    const gamma = S.length ? dot(S[S.length - 1], Y[Y.length - 1]) / dot(Y[Y.length - 1], Y[Y.length - 1]) : 1 / Math.max(1, maxAbs(g));
    for (let i = 0; i < n; i++) d[i] *= gamma;
    for (let k = 0; k < S.length; k++) {
      const beta = rho[k] * dot(Y[k], d);
      for (let i = 0; i < n; i++) d[i] += S[k][i] * (alpha[k] - beta);
    }
    for (let i = 0; i < n; i++) d[i] = -d[i];
    let slope = dot(g, d);
    if (!(slope < 0)) {
      // Not a descent direction (curvature information went stale): restart from steepest descent.
      S.length = Y.length = rho.length = 0;
      for (let i = 0; i < n; i++) d[i] = -g[i] / Math.max(1, maxAbs(g));
      slope = dot(g, d);
      if (!(slope < 0)) return { x, f: fx, iterations: it, converged: true };
    }
    let step = 1;
    let fNew = NaN;
    let accepted = false;
    for (let tries = 0; tries < 60; tries++) {
      for (let i = 0; i < n; i++) xNew[i] = x[i] + step * d[i];
      fNew = f(xNew, gNew);
      if (Number.isFinite(fNew) && fNew <= fx + 1e-4 * step * slope) {
        accepted = true;
        break;
      }
      step *= 0.5;
    }
    if (!accepted) return { x, f: fx, iterations: it, converged: true };
    // Where the objective is nearly linear (Huber's linear arms far from the optimum) there is no
    // curvature to scale the step, so a unit step is tiny: grow it while it keeps paying.
    if (step === 1) {
      for (let grow = 0; grow < 40; grow++) {
        const next = step * 2;
        for (let i = 0; i < n; i++) xTry[i] = x[i] + next * d[i];
        const fTry = f(xTry, gTry);
        if (!(Number.isFinite(fTry) && fTry <= fx + 1e-4 * next * slope && fTry < fNew)) break;
        step = next;
        fNew = fTry;
        xNew.set(xTry);
        gNew.set(gTry);
      }
    }
    const s = new Float64Array(n);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      s[i] = xNew[i] - x[i];
      y[i] = gNew[i] - g[i];
    }
    const sy = dot(s, y);
    if (sy > 1e-18) {
      S.push(s);
      Y.push(y);
      rho.push(1 / sy);
      if (S.length > m) {
        S.shift();
        Y.shift();
        rho.shift();
      }
    }
    const improvement = fx - fNew;
    x = Float64Array.from(xNew);
    g = Float64Array.from(gNew);
    fx = fNew;
    // Three iterations in a row that gain (almost) nothing: converged as far as doubles tell.
    stalled = improvement <= fTol * Math.max(Math.abs(fx), 1) ? stalled + 1 : 0;
    if (stalled >= 3) return { x, f: fx, iterations: it + 1, converged: true };
  }
  return { x, f: fx, iterations: it, converged: maxAbs(g) < gTol };
}

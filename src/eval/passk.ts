/**
 * The unbiased pass@k estimator (Chen et al., 2021): with n samples of which c pass,
 * pass@k = 1 - C(n-c, k) / C(n, k), computed as a product to stay exact for large n.
 */
export function passAtK(n: number, c: number, k: number): number {
  if (k > n) throw new Error(`pass@k: k=${k} exceeds the number of samples n=${n}`);
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

/** Mean pass@k over problems, each given as (n, c). */
export function meanPassAtK(counts: Array<{ n: number; c: number }>, k: number): number {
  if (counts.length === 0) return 0;
  return counts.reduce((s, x) => s + passAtK(x.n, x.c, k), 0) / counts.length;
}

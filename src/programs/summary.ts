import { median } from '../util/stats';
import type { Construct } from './ir';
import type { TraceStats } from './tracestats';

/**
 * Corpus statistics: what `ndbg programs generate` prints and writes next to its output, and
 * what `ndbg programs stats` reports for any corpus (CruxEval included), so the two compare.
 */
export interface Distribution {
  n: number;
  min: number;
  median: number;
  mean: number;
  p90: number;
  max: number;
}

export function distribution(values: number[]): Distribution {
  if (values.length === 0) return { n: 0, min: 0, median: 0, mean: 0, p90: 0, max: 0 };
  const v = [...values].sort((a, b) => a - b);
  const q = (p: number) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
  const mean = v.reduce((a, b) => a + b, 0) / v.length;
  return { n: v.length, min: v[0], median: median(v), mean: round(mean), p90: q(0.9), max: v[v.length - 1] };
}

function round(x: number, d = 3): number {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}

function histogramOf(values: number[]): Record<string, number> {
  const h: Record<string, number> = {};
  for (const x of [...values].sort((a, b) => a - b)) h[String(x)] = (h[String(x)] ?? 0) + 1;
  return h;
}

/** Statistics over traced runs (records) and, when grouped, over programs. */
export interface TraceSummary {
  records: number;
  status: Record<string, number>;
  events: Distribution;
  maxDepth: Distribution;
  maxDepthHistogram: Record<string, number>;
  /** Fractions of records. */
  withException: number;
  withRecursion: number;
  endedInError: number;
  /** Fractions of programs (a program's value is the max/any over its records). */
  programs: number;
  programsDepthAtLeast3: number;
  programsWithException: number;
  programsWithRecursion: number;
  programsWithErrorRun: number;
}

/** `groups[i]` is the program index of `stats[i]` (records of one program share it). */
export function summarizeTraces(stats: TraceStats[], groups: Array<string | number>): TraceSummary {
  const status: Record<string, number> = {};
  for (const s of stats) status[s.status] = (status[s.status] ?? 0) + 1;
  const byProgram = new Map<string | number, TraceStats[]>();
  stats.forEach((s, i) => {
    const g = byProgram.get(groups[i]) ?? [];
    g.push(s);
    byProgram.set(groups[i], g);
  });
  const progs = [...byProgram.values()];
  const frac = (n: number, d: number) => (d ? round(n / d, 4) : 0);
  return {
    records: stats.length,
    status,
    events: distribution(stats.map((s) => s.events)),
    maxDepth: distribution(stats.map((s) => s.maxDepth)),
    maxDepthHistogram: histogramOf(stats.map((s) => s.maxDepth)),
    withException: frac(stats.filter((s) => s.exception).length, stats.length),
    withRecursion: frac(stats.filter((s) => s.recursion).length, stats.length),
    endedInError: frac(stats.filter((s) => s.status === 'error').length, stats.length),
    programs: progs.length,
    programsDepthAtLeast3: frac(progs.filter((g) => Math.max(...g.map((s) => s.maxDepth)) >= 3).length, progs.length),
    programsWithException: frac(progs.filter((g) => g.some((s) => s.exception)).length, progs.length),
    programsWithRecursion: frac(progs.filter((g) => g.some((s) => s.recursion)).length, progs.length),
    programsWithErrorRun: frac(progs.filter((g) => g.some((s) => s.status === 'error')).length, progs.length),
  };
}

/** Construct counts over accepted programs: in how many programs, and how often in all. */
export function summarizeConstructs(hists: Array<Partial<Record<Construct, number>>>): Record<string, { programs: number; total: number }> {
  const out: Record<string, { programs: number; total: number }> = {};
  for (const h of hists) {
    for (const [k, n] of Object.entries(h)) {
      if (!n) continue;
      const e = (out[k] ??= { programs: 0, total: 0 });
      e.programs++;
      e.total += n;
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

export { histogramOf };

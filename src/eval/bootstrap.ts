/**
 * 95% intervals for a rate by bootstrapping over programs. Tasks of one program are not
 * independent (they share its code and trace), so resampling tasks would understate the noise;
 * we resample whole programs with replacement and take the percentile interval of the rate.
 * Seeded (util/rng), so the same results give the same interval byte for byte.
 */
import { Rng } from '../util/rng';

export interface Interval {
  lo: number;
  hi: number;
  /** Distinct programs the rate rests on. */
  programs: number;
}

/**
 * The percentile interval of sum(hits)/sum(tasks) over `resamples` draws of the programs.
 * `groups` holds, per program, [right, scored] counts. An empty set gives [0, 0].
 */
export function bootstrapRate(groups: Array<[number, number]>, options: { resamples?: number; seed?: number; level?: number } = {}): Interval {
  const resamples = options.resamples ?? 1000;
  const level = options.level ?? 0.95;
  const n = groups.length;
  if (n === 0) return { lo: 0, hi: 0, programs: 0 };
  const rng = Rng.from(options.seed ?? 0, 'bootstrap');
  const rates: number[] = [];
  for (let r = 0; r < resamples; r++) {
    let right = 0;
    let total = 0;
    for (let i = 0; i < n; i++) {
      const [h, t] = groups[rng.int(n)];
      right += h;
      total += t;
    }
    rates.push(total > 0 ? right / total : 0);
  }
  rates.sort((a, b) => a - b);
  const at = (q: number) => rates[Math.min(resamples - 1, Math.max(0, Math.floor(q * resamples)))];
  return { lo: at((1 - level) / 2), hi: at(1 - (1 - level) / 2), programs: n };
}

/** Per-program [right, scored] counts of items keyed by program id. */
export function groupByProgram<T>(items: T[], program: (x: T) => string, right: (x: T) => boolean): Array<[number, number]> {
  const m = new Map<string, [number, number]>();
  for (const x of items) {
    const g = m.get(program(x)) ?? [0, 0];
    if (right(x)) g[0]++;
    g[1]++;
    m.set(program(x), g);
  }
  return [...m.values()];
}

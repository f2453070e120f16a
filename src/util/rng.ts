/**
 * Seeded random numbers (xoshiro128**), the only source of randomness in ndbg.
 * The state is four uint32 words, so it serializes into a checkpoint or a loader state.
 * Streams are derived from (seed, ...keys) by hashing, so e.g. the sampler for program
 * "sample_3" with seed 7 is the same whatever order programs are processed in.
 */
export type RngState = [number, number, number, number];

/** FNV-1a over the UTF-16 code units of a string, mixed with a running hash. */
function hashString(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function splitmix32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

export class Rng {
  private s: Uint32Array;

  private constructor(state: RngState) {
    this.s = Uint32Array.from(state);
    if (this.s.every((w) => w === 0)) this.s[0] = 1; // all-zero is xoshiro's fixed point
  }

  /** A stream determined by the seed and any number of keys (program id, purpose, ...). */
  static from(seed: number, ...keys: Array<string | number>): Rng {
    let h = hashString(0x811c9dc5, String(seed));
    for (const k of keys) h = hashString(hashString(h, '\u0000'), String(k));
    const sm = splitmix32(h);
    return new Rng([sm(), sm(), sm(), sm()]);
  }

  static fromState(state: RngState): Rng {
    return new Rng(state);
  }

  state(): RngState {
    return [this.s[0], this.s[1], this.s[2], this.s[3]];
  }

  /** Next uint32. */
  nextU32(): number {
    const s = this.s;
    const result = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
  }

  /** Uniform float in [0, 1) with 53 random bits. */
  next(): number {
    const hi = this.nextU32() >>> 5;
    const lo = this.nextU32() >>> 6;
    return (hi * 67108864 + lo) / 9007199254740992;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    if (!(n > 0)) throw new Error(`Rng.int: n must be positive, got ${n}`);
    return Math.floor(this.next() * n);
  }

  /** Uniform integer in [lo, hi] inclusive. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }

  bool(p = 0.5): boolean {
    return this.next() < p;
  }

  choice<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Rng.choice: empty list');
    return items[this.int(items.length)];
  }

  /** Index drawn with probability proportional to weights (need not sum to 1). */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w;
    if (!(total > 0)) throw new Error('Rng.weighted: weights must have a positive sum');
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i];
      if (r < 0) return i;
    }
    // Rounding can leave r at ~0: fall back to the last index with positive weight.
    for (let i = weights.length - 1; i >= 0; i--) if (weights[i] > 0) return i;
    return weights.length - 1;
  }

  /** Fisher–Yates shuffle in place. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      [items[i], items[j]] = [items[j], items[i]];
    }
    return items;
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

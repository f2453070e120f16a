/**
 * MinHash signatures of documents over word shingles, the estimate of Jaccard similarity that
 * near-duplicate removal uses (Broder 1997; the settings of src/data/dedup.ts follow the
 * common code/web recipes: 5-token shingles, about a hundred hash functions, LSH banding).
 * Deterministic: the hash functions are drawn from the seed.
 */
import { Rng } from '../util/rng';

/**
 * Tokens for shingling: runs of letters/digits/underscore, and every other non-space character
 * alone. Whitespace and case are dropped, so a reindented or re-cased copy is the same set.
 */
const TOKEN_RE = /[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu;

function hashToken(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** murmur3's finalizer: a bijection of 32-bit words that mixes every input bit into every output bit. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The distinct 32-bit hashes of the text's `k`-token shingles (one shingle of all tokens when there are fewer). */
export function shingleHashes(text: string, k: number): Uint32Array {
  const tokens: number[] = [];
  for (const m of text.toLowerCase().matchAll(TOKEN_RE)) tokens.push(hashToken(m[0]));
  if (tokens.length === 0) return new Uint32Array(0);
  const n = Math.max(1, tokens.length - k + 1);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    let h = 0x9747b28c;
    for (let j = i; j < Math.min(i + k, tokens.length); j++) h = fmix32((h ^ tokens[j]) + 0x9e3779b9);
    out[i] = h;
  }
  out.sort();
  let w = 0;
  for (let i = 0; i < n; i++) if (i === 0 || out[i] !== out[i - 1]) out[w++] = out[i];
  return out.subarray(0, w);
}

export class MinHasher {
  private readonly salts: Uint32Array;

  /** `numHashes` hash functions, h_i(x) = fmix32(x XOR salt_i), salts drawn from `seed`. */
  constructor(readonly numHashes: number, seed: number) {
    const rng = Rng.from(seed, 'minhash');
    this.salts = Uint32Array.from({ length: numHashes }, () => rng.nextU32());
  }

  /** The signature: per hash function, the minimum over the shingles. */
  signature(shingles: Uint32Array): Uint32Array {
    const sig = new Uint32Array(this.numHashes).fill(0xffffffff);
    for (let s = 0; s < shingles.length; s++) {
      const x = shingles[s];
      for (let i = 0; i < sig.length; i++) {
        const h = fmix32(x ^ this.salts[i]);
        if (h < sig[i]) sig[i] = h;
      }
    }
    return sig;
  }
}

/** Estimated Jaccard similarity: the share of hash functions whose minima agree. */
export function estimatedJaccard(a: Uint32Array, b: Uint32Array): number {
  let same = 0;
  for (let i = 0; i < a.length; i++) if (a[i] === b[i]) same++;
  return same / a.length;
}

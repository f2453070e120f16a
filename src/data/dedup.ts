/**
 * Exact and near-duplicate removal over the code and text documents of one build, within and
 * across sources: the first copy seen (sources in `--source` order, documents in file order)
 * is kept, later copies are dropped. Exact copies are caught by a content hash; near copies
 * (a changed header, a renamed variable, a reflowed paragraph) by MinHash with LSH banding and
 * a check of the estimated Jaccard similarity of every candidate pair, so the threshold is a
 * property of the kept set, not only of the banding's S-curve.
 *
 * Memory: one signature (`hashes` × 4 bytes) and `bands` bucket entries per kept document,
 * about 0.6 KB with the defaults — ~600 MB for a million documents.
 */
import { createHash } from 'crypto';
import { MinHasher, estimatedJaccard, shingleHashes } from './minhash';

export interface DedupSettings {
  /** Tokens per shingle. */
  shingle: number;
  /** MinHash functions; a multiple of `bands`. */
  hashes: number;
  bands: number;
  /** Estimated Jaccard similarity (of shingle sets) at or above which a document is a near duplicate. */
  threshold: number;
  seed: number;
}

/**
 * 14 bands of 8 rows: a pair at Jaccard 0.8 becomes a candidate with probability 0.92, at 0.9
 * with ≈1.0, at 0.5 with 0.05; candidates are then checked against the threshold.
 */
export const DEFAULT_DEDUP: DedupSettings = { shingle: 5, hashes: 112, bands: 14, threshold: 0.8, seed: 0 };

export interface DedupCounts {
  /** Byte-identical to a document kept earlier. */
  exact: number;
  /** Not identical, but at or above the threshold with one kept earlier. */
  near: number;
  /** Of those, copies of a document of another source. */
  acrossSources: number;
}

export const emptyDedupCounts = (): DedupCounts => ({ exact: 0, near: 0, acrossSources: 0 });

/** Signatures of the kept documents, in fixed-size blocks (no per-document object). */
class SignatureStore {
  private readonly blocks: Uint32Array[] = [];
  private count = 0;
  private static readonly PER_BLOCK = 4096;

  constructor(private readonly width: number) {}

  add(sig: Uint32Array): number {
    const i = this.count++;
    const b = Math.floor(i / SignatureStore.PER_BLOCK);
    if (b === this.blocks.length) this.blocks.push(new Uint32Array(SignatureStore.PER_BLOCK * this.width));
    this.blocks[b].set(sig, (i % SignatureStore.PER_BLOCK) * this.width);
    return i;
  }

  get(i: number): Uint32Array {
    const off = (i % SignatureStore.PER_BLOCK) * this.width;
    return this.blocks[Math.floor(i / SignatureStore.PER_BLOCK)].subarray(off, off + this.width);
  }
}

/** A band's rows as one Map key: two independent 32-bit hashes packed into 53 bits, so unrelated bands rarely share a bucket. */
function bandKey(sig: Uint32Array, from: number, to: number): number {
  let a = 0x811c9dc5;
  let b = 0x01000193;
  for (let i = from; i < to; i++) {
    a = Math.imul(a ^ sig[i], 0x01000193);
    b = Math.imul(b ^ sig[i], 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0) * 2 ** 21 + ((b >>> 0) >>> 11);
}

export type DuplicateVerdict = { kind: 'exact' | 'near'; ofSource: number } | undefined;

export class Deduplicator {
  private readonly hasher: MinHasher;
  private readonly rows: number;
  private readonly exact = new Map<string, number>();
  private readonly signatures: SignatureStore;
  private readonly sourceOf: number[] = [];
  private readonly buckets: Array<Map<number, number | number[]>>;

  constructor(readonly settings: DedupSettings) {
    if (settings.hashes % settings.bands !== 0) throw new Error(`dedup: ${settings.hashes} hashes do not divide into ${settings.bands} bands`);
    this.hasher = new MinHasher(settings.hashes, settings.seed);
    this.rows = settings.hashes / settings.bands;
    this.signatures = new SignatureStore(settings.hashes);
    this.buckets = Array.from({ length: settings.bands }, () => new Map());
  }

  /** Whether `text` duplicates a document kept so far; a new document is kept (indexed). */
  check(text: string, source: number): DuplicateVerdict {
    const digest = createHash('sha256').update(text).digest('base64');
    const exactOf = this.exact.get(digest);
    if (exactOf !== undefined) return { kind: 'exact', ofSource: exactOf };
    const shingles = shingleHashes(text, this.settings.shingle);
    if (shingles.length === 0) {
      this.exact.set(digest, source);
      return undefined;
    }
    const sig = this.hasher.signature(shingles);
    const keys = this.buckets.map((_, b) => bandKey(sig, b * this.rows, (b + 1) * this.rows));
    const checked = new Set<number>();
    for (let b = 0; b < keys.length; b++) {
      const hit = this.buckets[b].get(keys[b]);
      if (hit === undefined) continue;
      for (const doc of typeof hit === 'number' ? [hit] : hit) {
        if (checked.has(doc)) continue;
        checked.add(doc);
        if (estimatedJaccard(sig, this.signatures.get(doc)) >= this.settings.threshold) return { kind: 'near', ofSource: this.sourceOf[doc] };
      }
    }
    this.exact.set(digest, source);
    const doc = this.signatures.add(sig);
    this.sourceOf.push(source);
    keys.forEach((k, b) => {
      const hit = this.buckets[b].get(k);
      if (hit === undefined) this.buckets[b].set(k, doc);
      else if (typeof hit === 'number') this.buckets[b].set(k, [hit, doc]);
      else hit.push(doc);
    });
    return undefined;
  }
}

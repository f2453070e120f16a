/**
 * The validation stream: every validation row of each source once, in stored order (no
 * shuffle, no mixing), so two runs, or two checkpoints, are scored on exactly the same rows.
 * Each batch holds rows of one source only, so per-source losses fall out directly; the last
 * batch of a source may hold fewer than batchSize rows.
 */
import { UserError } from '../util/errors';
import { batchFromRows, type TokenBatch } from './batch';
import { loadShard, openDatasets, type OpenedDataset } from './dataset';

export interface ValidationOptions {
  datasets: string[];
  batchSize: number;
  /** Sources to include, in this order (default: all, in manifest order). */
  sources?: string[];
  /** Stop each source after this many rows (a fixed prefix, so still repeatable). */
  maxRowsPerSource?: number;
  verifySha256?: boolean;
  tokenizerSha256?: string;
}

/** Validation rows of one source (the layout and lossMask meaning are TokenBatch's, batch.ts). */
export interface ValidationBatch extends TokenBatch {
  source: string;
  docIds: Int32Array;
}

export class ValidationStream {
  readonly dataset: OpenedDataset;

  constructor(readonly options: ValidationOptions) {
    if (!Number.isInteger(options.batchSize) || options.batchSize < 1) throw new UserError(`validation batchSize must be a positive integer, got ${options.batchSize}`);
    this.dataset = openDatasets(options.datasets, 'val', { tokenizerSha256: options.tokenizerSha256 });
    for (const name of options.sources ?? []) {
      if (!this.dataset.sources.some((s) => s.name === name)) throw new UserError(`validation: no source "${name}" in ${options.datasets.join(', ')}`);
    }
  }

  /** A fresh pass over the validation rows (each call starts from the beginning). */
  *batches(): Generator<ValidationBatch> {
    const L = this.dataset.rowLen;
    const B = this.options.batchSize;
    const names = this.options.sources ?? this.dataset.sources.map((s) => s.name);
    for (const name of names) {
      const src = this.dataset.sources.find((s) => s.name === name)!;
      let left = Math.min(src.rows, this.options.maxRowsPerSource ?? Infinity);
      for (let k = 0; k < src.shards.length && left > 0; k++) {
        const shard = loadShard(src, k, 'val', this.options.verifySha256 ?? true);
        for (let r = 0; r < shard.rows && left > 0; ) {
          const n = Math.min(B, shard.rows - r, left);
          const ids = Int32Array.from(shard.tokens.subarray(r * L, (r + n) * L));
          const docIds = shard.docIds.slice(r * L, (r + n) * L);
          yield { ...batchFromRows(n, L, ids, shard.mask.slice(r * L, (r + n) * L), docIds), source: name, docIds };
          r += n;
          left -= n;
        }
      }
    }
  }
}

/**
 * The one batch type, from the loader (loader.ts, validation.ts) through the trainer to the
 * model's loss (src/model/model.ts `lossSum`). Its layout is the data set's row layout:
 *
 *   ids       [B, T+1] row-major int32. Row r is T+1 consecutive tokens of the packed stream
 *             (pack.ts); the model reads ids[r, 0..T-1] and predicts ids[r, 1..T], so inputs
 *             are ids[:, :T] and targets ids[:, 1:].
 *   lossMask  [B, T+1], aligned with ids: lossMask[r, i] = 1 when token i is a target that
 *             counts in the loss, else 0. Column 0 is always 0 (nothing in the row predicts
 *             it: in a stream-packed source it is the previous row's last token, already a
 *             target there). The number of targets is therefore the mask's plain sum.
 *   docIds    [B, T+1], aligned with ids: the document of each token (-1 for padding);
 *             attention does not cross documents. Optional for hand-made batches.
 */
export interface TokenBatch {
  /** B: rows. */
  batchSize: number;
  /** T: predicted positions per row (each row has T+1 ids). */
  seqLen: number;
  ids: Int32Array;
  lossMask: Uint8Array;
  docIds?: Int32Array;
}

/**
 * The two names of the context length, used everywhere in code: `seqLen` is T, the positions a
 * model reads (a run's `data.seq_len`, capped by `model.max_seq_len`); `rowLen` is T+1, the
 * tokens of one training row (T inputs, T targets, overlapping in all but the ends). A
 * document fits a model whole when it is at most one row. docs/data.md, "The context length".
 */
export function rowLenOf(seqLen: number): number {
  return seqLen + 1;
}

/** Targets that count in the loss: Σ lossMask (column 0 is 0 by the type's invariant). */
export function targetCount(b: TokenBatch): number {
  let n = 0;
  for (let i = 0; i < b.lossMask.length; i++) if (b.lossMask[i] !== 0) n++;
  return n;
}

/**
 * A batch from stored rows of rowLen tokens (arrays it takes over), with column 0 of the mask
 * cleared so the invariant above holds whatever the stored mask says there.
 */
export function batchFromRows(rows: number, rowLen: number, ids: Int32Array, lossMask: Uint8Array, docIds?: Int32Array): TokenBatch {
  for (let r = 0; r < rows; r++) lossMask[r * rowLen] = 0;
  return { batchSize: rows, seqLen: rowLen - 1, ids, lossMask, docIds };
}

/** The first seqLen+1 tokens of every row (training on shorter rows than the data's). */
export function cropBatch<B extends TokenBatch>(b: B, seqLen: number): B {
  if (seqLen === b.seqLen) return b;
  if (!(seqLen >= 1 && seqLen < b.seqLen)) throw new Error(`cropBatch: cannot crop rows of T=${b.seqLen} to T=${seqLen}`);
  const from = b.seqLen + 1;
  const to = seqLen + 1;
  const crop = <A extends Int32Array | Uint8Array>(src: A, make: (n: number) => A): A => {
    const out = make(b.batchSize * to);
    for (let r = 0; r < b.batchSize; r++) out.set(src.subarray(r * from, r * from + to), r * to);
    return out;
  };
  return {
    ...b,
    seqLen,
    ids: crop(b.ids, (n) => new Int32Array(n)),
    lossMask: crop(b.lossMask, (n) => new Uint8Array(n)),
    docIds: b.docIds && crop(b.docIds, (n) => new Int32Array(n)),
  };
}

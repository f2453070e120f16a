import type * as tf from '@tensorflow/tfjs-core';

/**
 * The two things the trainer needs from the rest of ndbg, kept as small interfaces so the loop,
 * optimizer and checkpoints are tested on their own. src/train/adapters.ts builds them from
 * src/model and src/data.
 */

/** One micro-batch: B rows of T+1 token ids; targets are ids[:, 1:]. */
export interface Batch {
  batchSize: number;
  /** T: the number of predicted positions per row (ids has T+1 columns). */
  seqLen: number;
  /** [B, T+1] row-major. */
  ids: Int32Array;
  /**
   * [B, T+1], aligned with ids (the data stage's layout): 1 where token i is a target that counts
   * in the loss. Column 0 is never a target (nothing predicts it) and is ignored.
   */
  lossMask: Uint8Array | Float32Array | Int32Array;
  /** [B, T+1]: document id per position (attention does not cross documents), when given. */
  docIds?: Int32Array;
}

export interface TrainableModel {
  /** Trainable variables by HF-Llama name, in a fixed order. */
  params: Array<{ name: string; variable: tf.Variable }>;
  /**
   * Sum over unmasked target positions of the per-token cross entropy (nats), a scalar built
   * from the variables so tfjs can differentiate it. A sum, not a mean, so micro-batches add up
   * and the trainer divides once by the step's total token count.
   */
  lossSum(batch: Batch): tf.Scalar;
  /** Forward+backward FLOPs per trained token (≈ 6·N + attention), for MFU; 0 when unknown. */
  flopsPerToken: number;
  /** Names and float32 values of every weight (for checkpoints). */
  getWeights(): Map<string, Float32Array>;
  setWeights(weights: Map<string, Float32Array>): void;
}

/** A deterministic, resumable stream of micro-batches. */
export interface BatchStream {
  next(): Batch;
  /** A small JSON-able state; a stream restored from it yields exactly the batches that followed. */
  state(): unknown;
}

/** Number of target positions that count in the loss. */
export function countTokens(batch: Batch): number {
  let n = 0;
  const m = batch.lossMask;
  const w = batch.seqLen + 1;
  for (let r = 0; r < batch.batchSize; r++) {
    for (let i = r * w + 1; i < (r + 1) * w; i++) if (m[i] !== 0) n++;
  }
  return n;
}

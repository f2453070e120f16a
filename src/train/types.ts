import type * as tf from '@tensorflow/tfjs-core';
import type { TokenBatch } from '../data/batch';
import type { TensorMap } from '../model/safetensors';

/**
 * The two things the trainer needs from the rest of ndbg, kept as small interfaces so the loop,
 * optimizer and checkpoints are tested on their own. src/train/adapters.ts builds them from
 * src/model and src/data. Batches are src/data/batch.ts's TokenBatch, as the loader makes them.
 */

export interface TrainableModel {
  /** Trainable variables by HF-Llama name, in a fixed order. */
  params: Array<{ name: string; variable: tf.Variable }>;
  /**
   * Sum over the batch's targets (TokenBatch's lossMask) of the per-token cross entropy (nats),
   * a scalar built from the variables so tfjs can differentiate it. A sum, not a mean, so
   * micro-batches add up and the trainer divides once by the step's total target count.
   */
  lossSum(batch: TokenBatch): tf.Scalar;
  /** Forward+backward FLOPs per trained token (≈ 6·N + attention), for MFU; 0 when unknown. */
  flopsPerToken: number;
  /** Every weight by name with its shape and float32 values (for checkpoints; the safetensors map). */
  getWeights(): TensorMap;
  setWeights(weights: TensorMap): void;
}

/** A deterministic, resumable stream of micro-batches. */
export interface BatchStream {
  next(): TokenBatch;
  /** A small JSON-able state; a stream restored from it yields exactly the batches that followed. */
  state(): unknown;
}

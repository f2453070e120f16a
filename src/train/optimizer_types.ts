import type * as tf from '@tensorflow/tfjs-core';

/** Everything an optimizer keeps between steps, as a checkpoint stores it. */
export interface OptimizerState {
  /** Number of updates applied so far (AdamW's bias-correction exponent of the next one minus 1). */
  t: number;
  /** Per-parameter buffers by `<kind>.<param name>`: AdamW's `m.`/`v.`, Muon's momentum `m.`. */
  moments: Map<string, Float32Array>;
}

/** What the training step needs of an optimizer (AdamW, or Muon with AdamW beside it). */
export interface Optimizer {
  readonly step: number;
  /** One line for the run's log: which parameters take which update. */
  describe(): string;
  /** The gradients grouped as applyGroups reads them (copies; the caller disposes). */
  groupGrads(grads: Map<string, tf.Tensor>): tf.Tensor[][];
  /** Σ g² over groupGrads' tensors. */
  sumOfSquares(groups: tf.Tensor[][]): tf.Scalar;
  /** One update; `gradScale` multiplies the gradients first (token normalization and clipping). */
  applyGroups(groups: tf.Tensor[][], lr: number, gradScale: number): void;
  state(): OptimizerState;
  restore(state: OptimizerState): void;
  dispose(): void;
}

import * as tf from '@tensorflow/tfjs-core';
import type { Optimizer } from './optimizer';
import { targetCount, type TokenBatch } from '../data/batch';
import type { TrainableModel } from './types';

/**
 * One optimizer step over several micro-batches (gradient accumulation).
 *
 * The loss of the step is Σ per-token losses / total unmasked tokens over all micro-batches, so
 * 1 micro-batch of 8 rows and 4 of 2 rows give the same update (up to float summation order):
 * each micro-batch contributes the gradient of its loss *sum*, and the accumulated gradient is
 * divided once by the step's token count. That division and the global-norm clipping are
 * folded into one scale factor applied inside the optimizer.
 */
export interface StepResult {
  /** Mean per-token loss of the step (nats). */
  loss: number;
  /** Global L2 norm of the token-normalized gradient, before clipping. */
  gradNorm: number;
  tokens: number;
  /** True when the loss or gradient was NaN/Inf and no update was applied. */
  skipped: boolean;
}

export interface StepOptions {
  lr: number;
  /** Clip the global gradient norm to this value; 0 or less disables clipping. */
  gradClip: number;
}

export function trainStep(model: TrainableModel, opt: Optimizer, microBatches: TokenBatch[], o: StepOptions): StepResult {
  const vars = model.params.map((p) => p.variable);
  const byVarName = new Map(model.params.map((p) => [p.variable.name, p.name]));
  let tokens = 0;
  for (const b of microBatches) tokens += targetCount(b);

  const acc = new Map<string, tf.Tensor>();
  let lossSum: tf.Tensor = tf.scalar(0);
  let groups: tf.Tensor[][] = [];
  try {
    for (const batch of microBatches) {
      const { value, grads } = tf.variableGrads(() => model.lossSum(batch), vars);
      const newLoss = tf.add(lossSum, value);
      lossSum.dispose();
      value.dispose();
      lossSum = newLoss;
      for (const [varName, g] of Object.entries(grads)) {
        const name = byVarName.get(varName)!;
        const prev = acc.get(name);
        if (prev) {
          acc.set(name, tf.add(prev, g));
          prev.dispose();
          g.dispose();
        } else acc.set(name, g);
      }
    }
    // Per optimizer group, one gradient per parameter (the same layout whichever kernel set
    // runs; the set's sumSquares takes the norm in two ops per group, or one native op).
    groups = opt.groupGrads(acc);
    for (const g of acc.values()) g.dispose();
    acc.clear();
    // One download for both numbers: the only sync point of the step.
    const both = tf.tidy(() => tf.stack([lossSum, opt.sumOfSquares(groups)]));
    const [lossTotal, sqTotal] = both.dataSync();
    both.dispose();

    const denom = Math.max(tokens, 1);
    const loss = lossTotal / denom;
    const gradNorm = Math.sqrt(sqTotal) / denom;
    if (!Number.isFinite(loss) || !Number.isFinite(gradNorm) || tokens === 0) {
      return { loss, gradNorm, tokens, skipped: true };
    }
    const clipCoef = o.gradClip > 0 && gradNorm > o.gradClip ? o.gradClip / (gradNorm + 1e-6) : 1;
    opt.applyGroups(groups, o.lr, clipCoef / denom);
    return { loss, gradNorm, tokens, skipped: false };
  } finally {
    lossSum.dispose();
    for (const g of acc.values()) g.dispose();
    for (const g of groups.flat()) g.dispose();
  }
}

/** Mean per-token loss over a fixed list of batches, without gradients. */
export function evalLoss(model: TrainableModel, batches: TokenBatch[]): { loss: number; tokens: number } {
  let total = 0;
  let tokens = 0;
  for (const b of batches) {
    const s = tf.tidy(() => model.lossSum(b));
    total += s.dataSync()[0];
    s.dispose();
    tokens += targetCount(b);
  }
  return { loss: tokens ? total / tokens : NaN, tokens };
}

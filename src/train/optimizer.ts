import type * as tf from '@tensorflow/tfjs-core';
import { AdamW, decayRule } from './adamw';
import { Muon } from './muon';
import type { OptimConfig } from './config';
import type { Optimizer } from './optimizer_types';
import type { TrainableModel } from './types';

export type { Optimizer, OptimizerState } from './optimizer_types';

/**
 * One update from raw gradients by parameter name; `gradScale` multiplies them first (token
 * normalization and clipping folded into one factor, so the gradients are read once).
 */
export function applyGradients(opt: Optimizer, grads: Map<string, tf.Tensor>, lr: number, gradScale: number): void {
  const groups = opt.groupGrads(grads);
  try {
    opt.applyGroups(groups, lr, gradScale);
  } finally {
    for (const g of groups.flat()) g.dispose();
  }
}

/** The run's optimizer over the model's parameters: `optim.muon` set selects Muon for the hidden matrices. */
export function makeOptimizer(model: TrainableModel, optim: OptimConfig): Optimizer {
  const isDecayed = decayRule(optim.no_decay, optim.decay_vectors);
  const params = model.params.map((p) => ({ name: p.name, variable: p.variable, decay: isDecayed(p.name, p.variable.shape) }));
  const adam = { beta1: optim.beta1, beta2: optim.beta2, eps: optim.eps, weightDecay: optim.weight_decay };
  if (!optim.muon) return new AdamW(params, adam);
  return new Muon(params, adam, { momentum: optim.muon.momentum, nsSteps: optim.muon.ns_steps, updateScale: optim.muon.update_scale });
}

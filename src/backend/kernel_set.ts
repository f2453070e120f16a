import * as tf from '@tensorflow/tfjs-core';
import type { FusedOps } from './fused_ops';

/**
 * Kernel sets, llm.c style: the model's blocks as one swappable object. The model (src/model/)
 * states each layer as calls on a KernelSet; which implementation runs is chosen once, when a
 * backend starts (selectKernels in kernels.ts), never per call.
 *
 *   reference  src/model/layers.ts: plain tfjs ops that read like the equations, autodiff
 *              gradients. The readable definition, and what the parity tests hold the fast set to.
 *   fused      fused_kernels.ts: norm weights and 1/√hd folded into the projections,
 *              hand-written gradients, one-pass loss; on the tensorflow backend with the native
 *              library (native/ndbg_ops.cc) its ops run as single native kernels.
 *
 * Both sets take and return the same tensors, and the optimizer receives the same gradient
 * layout (one tensor per parameter, see src/train/adamw.ts) whichever set runs. The timings of
 * each fused op against its reference are in bench/results/kernels.json (`npm run bench -- kernels`).
 */

/** One layer's attention weights by role, model layout ([in, out] projections). */
export interface AttentionWeights {
  norm: tf.Tensor;
  q: tf.Tensor2D;
  k: tf.Tensor2D;
  v: tf.Tensor2D;
}

/** One layer's MLP weights by role. */
export interface MlpWeights {
  norm: tf.Tensor;
  gate: tf.Tensor2D;
  up: tf.Tensor2D;
  down: tf.Tensor2D;
}

/** The head geometry of one forward: B rows of T new positions, H query and Hkv key/value heads of size hd. */
export interface Heads {
  B: number;
  T: number;
  H: number;
  Hkv: number;
  hd: number;
}

/** RoPE tables for the T new positions ([T, hd] each) and rotate_half as a matrix [hd, hd] (layers.rotateHalfMatrix). */
export interface RopeTables {
  cos: tf.Tensor2D;
  sin: tf.Tensor2D;
  rot: tf.Tensor2D;
}

export interface KernelSet {
  readonly name: 'reference' | 'fused' | 'fused-native';
  /** The native op library this set runs, when it runs one (the optimizer's fused AdamW reads it). */
  readonly native?: FusedOps;
  /** rmsnorm(x)·w projected to q, k, v heads [B, n, T, hd], RoPE applied to q and k; q is in the form this set's attention() takes. */
  qkv(x: tf.Tensor2D, w: AttentionWeights, heads: Heads, rope: RopeTables, eps: number): { q: tf.Tensor4D; k: tf.Tensor4D; v: tf.Tensor4D };
  /** softmax(q·kᵀ/√hd + bias)·v with grouped-query heads → [B·T, H·hd]; bias [1|B, 1, g·T, S]. */
  attention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor4D): tf.Tensor2D;
  /** Causal and same-document bias [B, 1, g·T, T] from document ids [B, T] and the causal bias [1, 1, T, T]. */
  documentBias(docIds: tf.Tensor2D, causal: tf.Tensor4D, g: number): tf.Tensor4D;
  /** down(silu(gate(n))·up(n)) with n = rmsnorm(x)·w (the residual add is the caller's). */
  mlp(x: tf.Tensor2D, w: MlpWeights, eps: number): tf.Tensor2D;
  /** x / √(mean(x²) + eps) · w over the last axis. */
  rmsNorm(x: tf.Tensor2D, w: tf.Tensor, eps: number): tf.Tensor2D;
  /** Σ scale·CE of logits h·headᵀ (tied: head = embedding [V, d]) or h·head ([d, V]); see lossScales. */
  headCrossEntropy(h: tf.Tensor2D, w: tf.Tensor2D, tied: boolean, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum'): tf.Scalar;
  /** Σ g² over the optimizer's gradient groups (one tensor per parameter, grouped). */
  sumSquares(groups: tf.Tensor[][]): tf.Scalar;
}

/** Additive attention bias: 0 where allowed, this where masked (exp underflows to exactly 0). */
export const MASKED = -1e9;

/** Per-row loss scales (weight/Σw for the mean, the weight for the sum) and flat target indices; checks targets. */
export function lossScales(N: number, V: number, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum'): { scale: Float32Array; flat: Int32Array } {
  let total = 0;
  for (let i = 0; i < N; i++) total += weights[i];
  const scale = new Float32Array(N);
  for (let i = 0; i < N; i++) scale[i] = reduction === 'sum' ? weights[i] : total > 0 ? weights[i] / total : 0;
  const flat = new Int32Array(N);
  for (let i = 0; i < N; i++) {
    if (targets[i] < 0 || targets[i] >= V) throw new Error(`target token ${targets[i]} at position ${i} is outside the vocabulary (${V})`);
    flat[i] = i * V + targets[i];
  }
  return { scale, flat };
}

/**
 * Σ g² as tfjs ops: each group's tensors as one flat vector, a square and a sum per group (two
 * ops per group rather than two per tensor; every op on the native backend is an eager call).
 */
export function sumSquaresTfjs(groups: tf.Tensor[][]): tf.Scalar {
  return tf.tidy(() => tf.addN(groups.map((parts) => tf.sum(tf.square(flattenGroup(parts))))) as tf.Scalar);
}

/** A group's tensors as one flat vector (a reshape for a group of one). */
export function flattenGroup(parts: tf.Tensor[]): tf.Tensor {
  return parts.length === 1 ? tf.reshape(parts[0], [-1]) : tf.concat(parts.map((p) => tf.reshape(p, [-1])));
}

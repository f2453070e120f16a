import * as tf from '@tensorflow/tfjs-core';
import { AttentionWeights, Heads, KernelSet, MASKED, MlpWeights, RopeTables, lossScales, sumSquaresTfjs } from '../backend/kernel_set';

/**
 * The reference blocks of the Llama decoder: plain tfjs ops that read like the equations, with
 * autodiff gradients (src/backend/gradients.ts). Defines rmsNorm, swiglu, applyRope, attention,
 * documentBias, qkv, mlp and headCrossEntropy, gathered as REFERENCE_KERNELS (the KernelSet of
 * src/backend/kernel_set.ts); the fast versions of the same blocks are the fused set in
 * src/backend/fused_kernels.ts, held to these by test/backend/fused_ops.test.ts. Also the tables
 * both sets share (RoPE, the causal bias).
 */

export { MASKED };

/** RMSNorm (HF LlamaRMSNorm): x / √(mean(x²) + eps) · w over the last axis. */
export function rmsNorm(x: tf.Tensor, w: tf.Tensor, eps: number): tf.Tensor {
  return tf.mul(tf.mul(x, tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), eps))), w);
}

/** SwiGLU: silu(g)·u with silu(g) = g·sigmoid(g). */
export function swiglu(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D {
  return tf.mul(tf.mul(gate, tf.sigmoid(gate)), up) as tf.Tensor2D;
}

/** rotate_half(x) = [−x2, x1] for x = [x1, x2], the halves of the last axis (HF Llama). */
function rotateHalf(x: tf.Tensor4D): tf.Tensor4D {
  const [x1, x2] = tf.split(x, 2, -1);
  return tf.concat([tf.neg(x2), x1], -1) as tf.Tensor4D;
}

/** RoPE: x·cos + rotate_half(x)·sin; x is [B, n, T, hd], cos/sin [T, hd]. */
export function applyRope(x: tf.Tensor4D, cos: tf.Tensor2D, sin: tf.Tensor2D): tf.Tensor4D {
  return tf.add(tf.mul(x, cos), tf.mul(rotateHalf(x), sin)) as tf.Tensor4D;
}

/**
 * cos/sin tables [maxLen, headDim] in the half-split layout of HF Llama: frequency i of
 * dims (i, i + hd/2) is theta^(-2i/hd), so each table is its hd/2 angles written twice.
 * Computed in float64 and rounded once, as the float64 reference does.
 */
export function ropeTables(maxLen: number, headDim: number, theta: number): { cos: Float32Array; sin: Float32Array } {
  const half = headDim / 2;
  const cos = new Float32Array(maxLen * headDim);
  const sin = new Float32Array(maxLen * headDim);
  for (let p = 0; p < maxLen; p++) {
    for (let i = 0; i < half; i++) {
      const angle = p * Math.pow(theta, (-2 * i) / headDim);
      const c = Math.cos(angle);
      const s = Math.sin(angle);
      cos[p * headDim + i] = cos[p * headDim + i + half] = c;
      sin[p * headDim + i] = sin[p * headDim + i + half] = s;
    }
  }
  return { cos, sin };
}

/**
 * rotate_half as a matrix R [hd, hd]: x·R = [−x2, x1] for x = [x1, x2] (halves of the last
 * axis). Entries are 0 and ±1, so the product is exact; one matmul instead of a split, a
 * negation and a concat forward (and their three gradients backward).
 */
export function rotateHalfMatrix(headDim: number): Float32Array {
  const half = headDim / 2;
  const r = new Float32Array(headDim * headDim);
  for (let j = 0; j < half; j++) {
    r[(j + half) * headDim + j] = -1;
    r[j * headDim + j + half] = 1;
  }
  return r;
}

/**
 * Causal bias [1, 1, g·T, S] for T queries at positions offset..offset+T−1 over S keys at
 * positions 0..S−1. Rows are repeated g times because grouped-query attention folds the g
 * query heads sharing a key/value head into the row axis (see attention()).
 */
export function attentionBias(T: number, S: number, offset: number, g: number): tf.Tensor4D {
  const data = new Float32Array(g * T * S);
  for (let r = 0; r < g; r++) {
    for (let i = 0; i < T; i++) {
      const row = (r * T + i) * S;
      data.fill(MASKED, row + Math.min(S, offset + i + 1), row + S);
    }
  }
  return tf.tensor4d(data, [1, 1, g * T, S]);
}

/**
 * The causal bias of attentionBias per row [B, 1, g·T, S], with row b's keys before padLeft[b]
 * masked too: left padding that lets prompts of different lengths decode as one batch.
 */
export function paddedAttentionBias(T: number, S: number, offset: number, g: number, padLeft: readonly number[]): tf.Tensor4D {
  const B = padLeft.length;
  const data = new Float32Array(B * g * T * S);
  for (let b = 0; b < B; b++) {
    const pad = Math.min(padLeft[b], S);
    for (let r = 0; r < g; r++) {
      for (let i = 0; i < T; i++) {
        const row = ((b * g + r) * T + i) * S;
        data.fill(MASKED, row, row + pad);
        data.fill(MASKED, row + Math.min(S, offset + i + 1), row + S);
      }
    }
  }
  return tf.tensor4d(data, [B, 1, g * T, S]);
}

/** The document mask's bias [B, 1, g·T, T]: position i attends to j only when j ≤ i (causal [1, 1, T, T]) and doc[i] == doc[j]. */
export function documentBias(docIds: tf.Tensor2D, causal: tf.Tensor4D, g: number): tf.Tensor4D {
  const [B, T] = docIds.shape;
  const other = tf.notEqual(tf.reshape(docIds, [B, 1, T, 1]), tf.reshape(docIds, [B, 1, 1, T]));
  const bias = tf.minimum(tf.mul(tf.cast(other, 'float32'), MASKED), causal);
  return tf.tile(bias, [1, 1, g, 1]) as tf.Tensor4D;
}

/**
 * softmax(q·kᵀ/√hd + bias)·v with grouped-query heads: q [B, H, T, hd], k and v [B, Hkv, S, hd],
 * bias [1|B, 1, g·T, S] with g = H / Hkv. The g query heads sharing a key/value head (HF
 * repeat_kv: head h uses kv head ⌊h/g⌋) are one [g·T, hd] block, the bias's row layout.
 * Returns [B·T, H·hd] ready for o_proj.
 */
export function attention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor4D): tf.Tensor2D {
  const [B, H, T, hd] = q.shape;
  const Hkv = k.shape[1];
  const grouped = tf.reshape(q, [B, Hkv, (H / Hkv) * T, hd]);
  const scores = tf.add(tf.div(tf.matMul(grouped, k, false, true), Math.sqrt(hd)), bias);
  const out = tf.reshape(tf.matMul(tf.softmax(scores), v), [B, H, T, hd]);
  return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [B * T, H * hd]) as tf.Tensor2D;
}

/** [B·T, n·hd] → heads [B, n, T, hd]. */
function splitHeads(y: tf.Tensor, s: Heads, n: number): tf.Tensor4D {
  return tf.transpose(tf.reshape(y, [s.B, s.T, n, s.hd]), [0, 2, 1, 3]) as tf.Tensor4D;
}

/** n = rmsnorm(x)·w;  q = rope(n·Wq),  k = rope(n·Wk),  v = n·Wv, as heads. */
export function qkv(x: tf.Tensor2D, w: AttentionWeights, s: Heads, rope: RopeTables, eps: number): { q: tf.Tensor4D; k: tf.Tensor4D; v: tf.Tensor4D } {
  const n = rmsNorm(x, w.norm, eps);
  const q = applyRope(splitHeads(tf.matMul(n, w.q), s, s.H), rope.cos, rope.sin);
  const k = applyRope(splitHeads(tf.matMul(n, w.k), s, s.Hkv), rope.cos, rope.sin);
  return { q, k, v: splitHeads(tf.matMul(n, w.v), s, s.Hkv) };
}

/** n = rmsnorm(x)·w;  down_proj(silu(gate_proj(n)) · up_proj(n)). */
export function mlp(x: tf.Tensor2D, w: MlpWeights, eps: number): tf.Tensor2D {
  const n = rmsNorm(x, w.norm, eps) as tf.Tensor2D;
  return tf.matMul(swiglu(tf.matMul(n, w.gate), tf.matMul(n, w.up)), w.down) as tf.Tensor2D;
}

/**
 * Σ scale·CE over the N rows of logits = h·wᵀ (tied embedding w [V, d]) or h·w (lm_head
 * [d, V]): CE = −log softmax(logits)[target], scale = weight/Σw for the mean (Σw = 0 gives 0),
 * the weight for the sum.
 */
export function headCrossEntropy(h: tf.Tensor2D, w: tf.Tensor2D, tied: boolean, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum' = 'mean'): tf.Scalar {
  const N = h.shape[0];
  const V = tied ? w.shape[0] : w.shape[1];
  const { scale, flat } = lossScales(N, V, targets, weights, reduction);
  const logits = tied ? tf.matMul(h, w, false, true) : tf.matMul(h, w);
  const logP = tf.gather(tf.reshape(tf.logSoftmax(logits), [-1]), tf.tensor1d(flat, 'int32'));
  return tf.sum(tf.mul(tf.neg(logP), tf.tensor1d(scale))) as tf.Scalar;
}

/** The reference blocks as a kernel set, for a model built to run the equations as written. */
export const REFERENCE_KERNELS: KernelSet = {
  name: 'reference',
  qkv: (x, w, heads, rope, eps) => tf.tidy(() => qkv(x, w, heads, rope, eps)),
  attention: (q, k, v, bias) => tf.tidy(() => attention(q, k, v, bias)),
  documentBias: (docIds, causal, g) => tf.tidy(() => documentBias(docIds, causal, g)),
  mlp: (x, w, eps) => tf.tidy(() => mlp(x, w, eps)),
  rmsNorm: (x, w, eps) => tf.tidy(() => rmsNorm(x, w, eps) as tf.Tensor2D),
  headCrossEntropy: (h, w, tied, targets, weights, reduction) => tf.tidy(() => headCrossEntropy(h, w, tied, targets, weights, reduction)),
  sumSquares: sumSquaresTfjs,
};

import * as tf from '@tensorflow/tfjs-core';
import { sparseSoftmaxCrossEntropy } from './native_ops';

/**
 * The building blocks of the Llama block, as pure functions of tensors (no state), so the
 * model file reads like the math and the KV-cache path reuses exactly the same code.
 */

/**
 * RMSNorm: x / sqrt(mean(x²) + eps) · w, over the last axis (HF LlamaRMSNorm), with a
 * hand-written gradient. With x̂ = x·r, r = (mean(x²) + eps)^(−1/2) and g = dy·w:
 *   dx = r · (g − x̂ · mean(g · x̂))        dw = Σ_rows dy · x̂
 * Autodiff through the forward ops would take ~20 ops per norm; this takes 8.
 */
export function rmsNorm(x: tf.Tensor, w: tf.Tensor, eps: number): tf.Tensor {
  const norm = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [xi, wi] = args as [tf.Tensor, tf.Tensor];
    const save = args[2] as tf.GradSaveFunc;
    const [xhat, r] = tf.tidy(() => {
      const rr = tf.rsqrt(tf.add(tf.mean(tf.square(xi), -1, true), eps));
      return [tf.mul(xi, rr), rr];
    });
    save([xhat, r, wi]);
    return {
      value: tf.mul(xhat, wi),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sx, sr, sw] = saved;
        return tf.tidy(() => {
          const g = tf.mul(dy, sw);
          const dx = tf.mul(sr, tf.sub(g, tf.mul(sx, tf.mean(tf.mul(g, sx), -1, true))));
          const rows = [...Array(dy.rank - 1).keys()];
          const dw = tf.sum(tf.mul(dy, sx), rows);
          return [dx, dw];
        });
      },
    };
  });
  return norm(x, w);
}

/** SiLU(x) = x·sigmoid(x). */
export function silu(x: tf.Tensor): tf.Tensor {
  return tf.mul(x, tf.sigmoid(x));
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

/** x·cos + rotate_half(x)·sin with rotate_half(x) = [−x2, x1]; x is [B, H, T, hd], cos/sin [T, hd]. */
export function applyRope(x: tf.Tensor4D, cos: tf.Tensor2D, sin: tf.Tensor2D): tf.Tensor4D {
  return tf.tidy(() => {
    const hd = x.shape[3];
    const [x1, x2] = tf.split(x, [hd / 2, hd / 2], 3);
    const rotated = tf.concat([tf.neg(x2), x1], 3);
    return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as tf.Tensor4D;
  });
}

/** Additive attention bias: 0 where allowed, this where masked (exp underflows to exactly 0). */
export const MASKED = -1e9;

/**
 * Bias [1 or B, 1, g·T, S] for T queries at positions offset..offset+T−1 over S keys at
 * positions 0..S−1: causal, and, when docIds ([B][T], offset 0, S = T) are given, confined to
 * the query's document. Rows are repeated g times because grouped-query attention folds the g
 * query heads sharing a key/value head into the row axis (see attention()).
 */
export function attentionBias(T: number, S: number, offset: number, g: number, docIds?: Int32Array[]): tf.Tensor4D {
  const B = docIds ? docIds.length : 1;
  const data = new Float32Array(B * g * T * S);
  for (let b = 0; b < B; b++) {
    const doc = docIds?.[b];
    for (let i = 0; i < T; i++) {
      const row = new Float32Array(S);
      for (let j = 0; j < S; j++) {
        const allowed = j <= offset + i && (!doc || doc[i] === doc[j]);
        row[j] = allowed ? 0 : MASKED;
      }
      for (let r = 0; r < g; r++) data.set(row, ((b * g + r) * T + i) * S);
    }
  }
  return tf.tensor4d(data, [B, 1, g * T, S]);
}

/**
 * Scaled dot-product attention with grouped-query heads.
 * q [B, H, T, hd], k and v [B, Hkv, S, hd], bias [1|B, 1, g·T, S] with g = H / Hkv.
 * The g query heads that share a key/value head (HF repeat_kv: head h uses kv head ⌊h/g⌋)
 * are reshaped into one [g·T, hd] block, so keys and values are never copied g times.
 * Returns [B·T, H·hd] ready for o_proj.
 */
export function attention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor4D): tf.Tensor2D {
  return tf.tidy(() => {
    const [B, H, T, hd] = q.shape;
    const Hkv = k.shape[1];
    const g = H / Hkv;
    // The 1/√hd scale on q ([.., T, hd]), not on the scores ([.., T, S]): one pass over the
    // smaller tensor, forward and backward.
    const qg = tf.reshape(tf.mul(q, 1 / Math.sqrt(hd)), [B, Hkv, g * T, hd]);
    const scores = tf.add(tf.matMul(qg, k, false, true), bias);
    const probs = tf.softmax(scores);
    const out = tf.reshape(tf.matMul(probs, v), [B, H, T, hd]);
    return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [B * T, H * hd]) as tf.Tensor2D;
  });
}

/** Per-row loss scales (weight/Σw for the mean, the weight for the sum) and flat target indices; checks targets. */
function lossScales(N: number, V: number, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum'): { scale: Float32Array; flat: Int32Array } {
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
 * Σ scale·CE over rows of logits [N, V] and G = softmax − onehot (the gradient before the row
 * scale). On tensorflow one fused op gives the per-row losses and G in one pass; elsewhere one
 * exp pass: log-sum-exp comes from the softmax's sum.
 */
function xent(lg: tf.Tensor2D, targets: Int32Array, scale: Float32Array, flat: Int32Array): [tf.Tensor2D, tf.Scalar] {
  const [N, V] = lg.shape;
  return tf.tidy(() => {
    const fused = sparseSoftmaxCrossEntropy(lg, tf.tensor1d(targets, 'int32'));
    if (fused) return [fused.backprop, tf.sum(tf.mul(fused.loss, tf.tensor1d(scale)))] as [tf.Tensor2D, tf.Scalar];
    const m = tf.max(lg, 1, true);
    const e = tf.exp(tf.sub(lg, m));
    const z = tf.sum(e, 1, true);
    const lse = tf.reshape(tf.add(m, tf.log(z)), [N]);
    const picked = tf.gather(tf.reshape(lg, [-1]), tf.tensor1d(flat, 'int32'));
    // int32 then cast: tfjs-wasm 4.22's OneHot writes int bit patterns into float32 outputs.
    const onehot = tf.cast(tf.oneHot(tf.tensor1d(targets, 'int32'), V), 'float32');
    return [tf.sub(tf.div(e, z), onehot), tf.sum(tf.mul(tf.sub(lse, picked), tf.tensor1d(scale)))] as [tf.Tensor2D, tf.Scalar];
  });
}

/**
 * Cross-entropy over positions weighted by `weights` (a loss mask): the weighted mean, or with
 * reduction 'sum' the weighted sum (what the trainer adds up over micro-batches), with a
 * hand-written gradient (softmax − onehot)·scale so backward does not differentiate through
 * log-softmax. logits [N, V]; targets and weights are host arrays of length N. Σw = 0 gives 0.
 */
export function weightedCrossEntropy(logits: tf.Tensor2D, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum' = 'mean'): tf.Scalar {
  const [N, V] = logits.shape;
  const { scale, flat } = lossScales(N, V, targets, weights, reduction);
  const ce = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const save = args[1] as tf.GradSaveFunc;
    const [g, value] = xent(args[0] as tf.Tensor2D, targets, scale, flat);
    save([g]);
    const gradFunc = (dy: tf.Tensor, s: tf.Tensor[]) => tf.tidy(() => tf.mul(s[0], tf.mul(tf.reshape(tf.tensor1d(scale), [N, 1]), dy)));
    return { value, gradFunc };
  });
  return ce(logits) as tf.Scalar;
}

/**
 * The output head and weightedCrossEntropy as one op: logits = h·wᵀ with the tied embedding
 * w [V, d], or h·w with lm_head w [d, V]. Same value and gradient as the two composed, but the
 * per-row loss scale is applied to the [N, d] factors of the two gradient matmuls instead of to
 * the [N, V] logits gradient: one pass fewer over the step's largest tensor.
 */
export function headCrossEntropy(h: tf.Tensor2D, w: tf.Tensor2D, tied: boolean, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum' = 'mean'): tf.Scalar {
  const N = h.shape[0];
  const V = tied ? w.shape[0] : w.shape[1];
  const { scale, flat } = lossScales(N, V, targets, weights, reduction);
  const ce = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [hi, wi] = args as [tf.Tensor2D, tf.Tensor2D];
    const save = args[2] as tf.GradSaveFunc;
    const logits = (tied ? tf.matMul(hi, wi, false, true) : tf.matMul(hi, wi)) as tf.Tensor2D;
    const [g, value] = xent(logits, targets, scale, flat);
    logits.dispose();
    save([g, hi, wi]);
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) =>
      tf.tidy(() => {
        const [sg, sh, sw] = saved;
        const rowScale = tf.mul(tf.reshape(tf.tensor1d(scale), [N, 1]), dy);
        const dh = tf.mul(tied ? tf.matMul(sg, sw) : tf.matMul(sg, sw, false, true), rowScale);
        const dw = tied ? tf.matMul(sg, tf.mul(sh, rowScale), true, false) : tf.matMul(tf.mul(sh, rowScale), sg, true, false);
        return [dh, dw];
      });
    return { value, gradFunc };
  });
  return ce(h, w) as tf.Scalar;
}

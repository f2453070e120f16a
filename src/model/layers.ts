import * as tf from '@tensorflow/tfjs-core';
import { fusedOps } from './fused_ops';

/**
 * The building blocks of the Llama block, as pure functions of tensors (no state), so the
 * model file reads like the math and the KV-cache path reuses exactly the same code.
 */

/**
 * RMSNorm: x / sqrt(mean(x²) + eps) · w, over the last axis (HF LlamaRMSNorm), with a
 * hand-written gradient. With x̂ = x·r, r = (mean(x²) + eps)^(−1/2) and g = dy·w:
 *   dx = r · (g − x̂ · mean(g · x̂))        dw = Σ_rows dy · x̂
 * Autodiff through the forward ops would take ~20 ops per norm; this takes 8. Without `w` it
 * returns x̂ (g = dy): the model folds a norm's weight into the rows of the projection that
 * follows ((x̂·w)·W = x̂·(diag(w)·W)), a multiply over [d, out] instead of three over [N, d].
 */
export function rmsNorm(x: tf.Tensor, w: tf.Tensor | undefined, eps: number): tf.Tensor {
  // On the native backend with the fused ops (native/ndbg_ops.cc) each side is one pass.
  const fused = fusedOps();
  const normalize = (xi: tf.Tensor) => {
    if (fused) return fused.rmsNorm(xi, eps);
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(xi), -1, true), eps));
    return [tf.mul(xi, r), r];
  };
  const dxOf = (g: tf.Tensor, xhat: tf.Tensor, r: tf.Tensor) =>
    fused ? fused.rmsNormGrad(g, xhat, r) : tf.mul(r, tf.sub(g, tf.mul(xhat, tf.mean(tf.mul(g, xhat), -1, true))));
  if (!w) {
    const bare = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const [xhat, r] = tf.tidy(() => normalize(args[0] as tf.Tensor));
      (args[1] as tf.GradSaveFunc)([xhat, r]);
      return { value: xhat, gradFunc: (dy: tf.Tensor, [sx, sr]: tf.Tensor[]) => tf.tidy(() => [dxOf(dy, sx, sr)]) };
    });
    return bare(x);
  }
  const norm = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [xi, wi] = args as [tf.Tensor, tf.Tensor];
    const save = args[2] as tf.GradSaveFunc;
    const [xhat, r] = tf.tidy(() => normalize(xi));
    save([xhat, r, wi]);
    return {
      value: tf.mul(xhat, wi),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [sx, sr, sw] = saved;
        return tf.tidy(() => {
          const rows = [...Array(dy.rank - 1).keys()];
          return [dxOf(tf.mul(dy, sw), sx, sr), tf.sum(tf.mul(dy, sx), rows)];
        });
      },
    };
  });
  return norm(x, w);
}

/**
 * SwiGLU silu(g)·u with a hand-written gradient. With s = sigmoid(g) and a = g·s = silu(g):
 *   du = dy · a        dg = dy · u · (s + a·(1 − s))        (silu'(g) = s·(1 + g·(1 − s)))
 * Autodiff through the separate silu and product took ~8 elementwise passes over [N, f]
 * backward; this takes 5. (g and u come from two products rather than one fused [d, 2f] one:
 * splitting its output and concatenating the gradient moved more memory than the second
 * matmul call costs.)
 */
export function swiglu(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D {
  const fused = fusedOps();
  if (fused) {
    // One pass each way; the backward recomputes sigmoid(g) rather than keeping it.
    const ff = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const [g, u] = args as [tf.Tensor2D, tf.Tensor2D];
      (args[2] as tf.GradSaveFunc)([g, u]);
      return { value: fused.swiglu(g, u) as tf.Tensor2D, gradFunc: (dy: tf.Tensor, [sg, su]: tf.Tensor[]) => fused.swigluGrad(dy, sg, su) };
    });
    return ff(gate, up) as tf.Tensor2D;
  }
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [g, u] = args as [tf.Tensor2D, tf.Tensor2D];
    const save = args[2] as tf.GradSaveFunc;
    const [sg, a] = tf.tidy(() => {
      const s = tf.sigmoid(g);
      return [s, tf.mul(g, s)];
    });
    save([sg, a, u]);
    return {
      value: tf.mul(a, u) as tf.Tensor2D,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const [ss, sa, su] = saved;
          return [tf.mul(tf.mul(dy, su), tf.add(ss, tf.mul(sa, tf.sub(1, ss)))), tf.mul(dy, sa)];
        }),
    };
  });
  return f(gate, up) as tf.Tensor2D;
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

/** x·cos + rotate_half(x)·sin; x is [B, n, T, hd], cos/sin [T, hd], rot from rotateHalfMatrix. */
export function applyRope(x: tf.Tensor4D, cos: tf.Tensor2D, sin: tf.Tensor2D, rot: tf.Tensor2D): tf.Tensor4D {
  const fused = fusedOps();
  if (fused) {
    // One pass forward; the gradient is the inverse rotation, one pass too.
    // The tables are saved: the caller's tidy may have disposed them by the time backprop runs.
    const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      (args[1] as tf.GradSaveFunc)([cos, sin]);
      return {
        value: fused.rope(args[0] as tf.Tensor, cos, sin, false) as tf.Tensor4D,
        gradFunc: (dy: tf.Tensor, [sc, ss]: tf.Tensor[]) => fused.rope(dy, sc, ss, true),
      };
    });
    return f(x) as tf.Tensor4D;
  }
  return tf.tidy(() => {
    const hd = x.shape[3];
    const rotated = tf.reshape(tf.matMul(tf.reshape(x, [-1, hd]), rot), x.shape);
    return tf.add(tf.mul(x, cos), tf.mul(rotated, sin)) as tf.Tensor4D;
  });
}

/** Additive attention bias: 0 where allowed, this where masked (exp underflows to exactly 0). */
export const MASKED = -1e9;

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
 * The document mask's bias [B, 1, g·T, T], built on the device from document ids [B, T] and
 * the causal bias [1, 1, T, T]: position i attends to j only when j ≤ i and doc[i] == doc[j].
 * A handful of ops over [B, T, T] instead of a host loop and a [B, g·T, T] upload per batch.
 */
export function documentBias(docIds: tf.Tensor2D, causal: tf.Tensor4D, g: number): tf.Tensor4D {
  // Fused: one pass writing the same 0 / MASKED values (the causal part is built in).
  const fused = fusedOps();
  if (fused) return fused.documentBias(docIds, g, MASKED);
  return tf.tidy(() => {
    const [B, T] = docIds.shape;
    const other = tf.notEqual(tf.reshape(docIds, [B, 1, T, 1]), tf.reshape(docIds, [B, 1, 1, T]));
    const bias = tf.minimum(tf.mul(tf.cast(other, 'float32'), MASKED), causal);
    return (g === 1 ? bias : tf.tile(bias, [1, 1, g, 1])) as tf.Tensor4D;
  });
}

/**
 * Dot-product attention with grouped-query heads; q comes already scaled by 1/√hd (the model
 * folds the scale into Wq, a [d, d] multiply instead of a pass over the activations).
 * q [B, H, T, hd], k and v [B, Hkv, S, hd], bias [1|B, 1, g·T, S] with g = H / Hkv.
 * The g query heads that share a key/value head (HF repeat_kv: head h uses kv head ⌊h/g⌋)
 * are reshaped into one [g·T, hd] block, so keys and values are never copied g times.
 * Returns [B·T, H·hd] ready for o_proj.
 */
export function attention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor4D): tf.Tensor2D {
  const fused = fusedOps();
  if (fused) {
    // One op each way (native/ndbg_ops.cc): products, masked softmax and the output layout in
    // cache-sized tiles, keys past the causal limit skipped.
    const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const [qi, ki, vi] = args as tf.Tensor4D[];
      const [out, probs] = fused.attention(qi, ki, vi, bias);
      (args[3] as tf.GradSaveFunc)([qi, ki, vi, probs]);
      return { value: out, gradFunc: (dy: tf.Tensor, [sq, sk, sv, sp]: tf.Tensor[]) => fused.attentionGrad(dy, sq, sk, sv, sp) };
    });
    return f(q, k, v) as tf.Tensor2D;
  }
  return tf.tidy(() => {
    const [B, H, T, hd] = q.shape;
    const Hkv = k.shape[1];
    const g = H / Hkv;
    const out = tf.reshape(attend(tf.reshape(q, [B, Hkv, g * T, hd]) as tf.Tensor4D, k, v, bias), [B, H, T, hd]);
    return tf.reshape(tf.transpose(out, [0, 2, 1, 3]), [B * T, H * hd]) as tf.Tensor2D;
  });
}

/**
 * O = softmax(q·kᵀ + bias)·v with a hand-written gradient. The softmax backward needs the row
 * sums D = Σ_j dP·P, and since O = P·v these equal Σ dO·O (FlashAttention's identity): a pass
 * over [.., T, hd] instead of an extra product and reduction over the [.., T, S] scores.
 *   dP = dO·vᵀ    dS = P·(dP − D)    dq = dS·k    dk = dSᵀ·q    dv = Pᵀ·dO
 * The bias is a constant (no gradient).
 */
function attend(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor4D): tf.Tensor4D {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [qi, ki, vi] = args as tf.Tensor4D[];
    const save = args[3] as tf.GradSaveFunc;
    const probs = tf.tidy(() => tf.softmax(tf.add(tf.matMul(qi, ki, false, true), bias)));
    const out = tf.matMul(probs, vi) as tf.Tensor4D;
    save([probs, qi, ki, vi, out]);
    return {
      value: out,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        tf.tidy(() => {
          const [sp, sq, sk, sv, so] = saved;
          const rowSums = tf.sum(tf.mul(dy, so), -1, true);
          const ds = tf.mul(sp, tf.sub(tf.matMul(dy, sv, false, true), rowSums));
          return [tf.matMul(ds, sk), tf.matMul(ds, sq, true, false), tf.matMul(sp, dy, true, false)];
        }),
    };
  });
  return f(q, k, v) as tf.Tensor4D;
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
 * The output head and a weighted cross-entropy as one op: logits = h·wᵀ with the tied embedding
 * w [V, d], or h·w with lm_head w [d, V]; value Σ scale·CE over the N rows (scale = weight/Σw
 * for the mean, the weight for the sum; Σw = 0 gives 0), with a hand-written gradient.
 *
 * Only three passes touch the [N, V] logits, the step's largest tensor: the softmax P, and two
 * row maxima that give log-sum-exp without an exp pass or underflow: lse = max(logits) −
 * log(max(P)), since max(P) = exp(max − lse) ≥ 1/V. The loss picks logits[t] by flat index.
 * The gradient (P − onehot(t))·scale is never built densely: with rs = scale·dy per row,
 *   tied:   dh = (P·w − w[t])·rs                  dw = Pᵀ·(h·rs) − Σ_{i: t_i = v} (h·rs)_i
 *   untied: dh = (P·wᵀ − (w[:, t])ᵀ)·rs           dw = (h·rs)ᵀ·P − (the same scatter)ᵀ
 * where the onehot parts are a row gather and a scatter-add over [N, d]. (TensorFlow's fused
 * SparseSoftmaxCrossEntropyWithLogits took 3× a Softmax at these shapes here and builds the
 * dense gradient.)
 */
export function headCrossEntropy(h: tf.Tensor2D, w: tf.Tensor2D, tied: boolean, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum' = 'mean'): tf.Scalar {
  const N = h.shape[0];
  const V = tied ? w.shape[0] : w.shape[1];
  const { scale, flat } = lossScales(N, V, targets, weights, reduction);
  const fused = fusedOps();
  if (fused) {
    // One pass over the logits gives the loss and G = (P − onehot(t))·scale (native/ndbg_ops.cc);
    // the backward is then two products with G: dh = G·w (tied) and dw = (hᵀ·G)ᵀ, the
    // transposed form because TensorFlow's MatMul with a transposed [N, V] left operand ran
    // ~1.4× slower than the product plus a [d, V] transpose (13.7 vs 17.9 ms at N = V = 2048).
    const fce = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const [hi, wi] = args as [tf.Tensor2D, tf.Tensor2D];
      const [value, g] = tf.tidy(() => {
        const logits = (tied ? tf.matMul(hi, wi, false, true) : tf.matMul(hi, wi)) as tf.Tensor2D;
        return fused.softmaxXent(logits, tf.tensor1d(targets, 'int32'), tf.tensor1d(scale));
      });
      (args[2] as tf.GradSaveFunc)([g, hi, wi]);
      return {
        value,
        gradFunc: (dy: tf.Tensor, [sg, sh, sw]: tf.Tensor[]) =>
          tf.tidy(() => {
            const dh = tied ? tf.matMul(sg, sw) : tf.matMul(sg, sw, false, true);
            const dw = tied ? tf.transpose(tf.matMul(sh, sg, true, false)) : tf.matMul(sh, sg, true, false);
            return [tf.mul(dh, dy), tf.mul(dw, dy)];
          }),
      };
    });
    return fce(h, w) as tf.Scalar;
  }
  const ce = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [hi, wi] = args as [tf.Tensor2D, tf.Tensor2D];
    const save = args[2] as tf.GradSaveFunc;
    const [probs, value] = tf.tidy(() => {
      const logits = (tied ? tf.matMul(hi, wi, false, true) : tf.matMul(hi, wi)) as tf.Tensor2D;
      const p = tf.softmax(logits);
      const lse = tf.sub(tf.max(logits, 1), tf.log(tf.max(p, 1)));
      const picked = tf.gather(tf.reshape(logits, [-1]), tf.tensor1d(flat, 'int32'));
      return [p, tf.sum(tf.mul(tf.sub(lse, picked), tf.tensor1d(scale)))] as [tf.Tensor2D, tf.Scalar];
    });
    save([probs, hi, wi]);
    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) =>
      tf.tidy(() => {
        const [sp, sh, sw] = saved;
        const t = tf.tensor1d(targets, 'int32');
        const rowScale = tf.mul(tf.reshape(tf.tensor1d(scale), [N, 1]), dy);
        const hs = tf.mul(sh, rowScale);
        const picked = tf.unsortedSegmentSum(hs, t, V);
        if (tied) {
          const dh = tf.mul(tf.sub(tf.matMul(sp, sw), tf.gather(sw, t)), rowScale);
          return [dh, tf.sub(tf.matMul(sp, hs, true, false), picked)];
        }
        const dh = tf.mul(tf.sub(tf.matMul(sp, sw, false, true), tf.transpose(tf.gather(sw, t, 1))), rowScale);
        return [dh, tf.sub(tf.matMul(hs, sp, true, false), tf.transpose(picked))];
      });
    return { value, gradFunc };
  });
  return ce(h, w) as tf.Scalar;
}

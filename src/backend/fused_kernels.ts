import * as tf from '@tensorflow/tfjs-core';
import type { FusedOps } from './fused_ops';
import { AttentionWeights, Heads, KernelSet, MASKED, MlpWeights, RopeTables, lossScales, sumSquaresTfjs } from './kernel_set';

/**
 * The fused kernel set (kernel_set.ts): the reference blocks of src/model/layers.ts rewritten
 * for speed with the same math. Defines qkv, attention, documentBias, mlp, rmsNorm,
 * headCrossEntropy and sumSquares. Every kernel takes `F`, the native ops (native/ndbg_ops.cc)
 * when they run here: each then is one native op each way; without them the same algebra
 * runs as tfjs ops with hand-written gradients. Timings against the reference: `npm run bench
 * -- kernels` (bench/results/kernels.json).
 */
export function fusedKernels(F: FusedOps | undefined): KernelSet {
  return {
    name: F ? 'fused-native' : 'fused',
    native: F,
    qkv: (x, w, heads, rope, eps) => qkv(F, x, w, heads, rope, eps),
    attention: (q, k, v, bias) => attention(F, q, k, v, bias),
    documentBias: (docIds, causal, g) => documentBias(F, docIds, causal, g),
    mlp: (x, w, eps) => mlp(F, x, w, eps),
    rmsNorm: (x, w, eps) => rmsNorm(F, x, w, eps) as tf.Tensor2D,
    headCrossEntropy: (h, w, tied, targets, weights, reduction) => headCrossEntropy(F, h, w, tied, targets, weights, reduction),
    sumSquares: (groups) => (F ? tf.tidy(() => F.sumSquares(groups.flat())) : sumSquaresTfjs(groups)),
  };
}

/** A norm's weight as a column [d, 1]: multiplying a [d, out] weight by it is diag(w)·W. */
const column = (w: tf.Tensor) => tf.reshape(w, [-1, 1]) as tf.Tensor2D;

/**
 * One product for q, k and v ([d, d] weights concatenated: one large matmul runs faster than
 * three), heads split once, RoPE on the q and k heads at once. The norm's weight scales the rows
 * of the concatenated weight ((x̂·w)·W = x̂·(diag(w)·W): a multiply over [d, out] instead of
 * three over [N, d]) and the attention scale 1/√hd rides on Wq, so q comes out pre-scaled.
 */
function qkv(F: FusedOps | undefined, x: tf.Tensor2D, w: AttentionWeights, s: Heads, rope: RopeTables, eps: number) {
  const n1 = rmsNorm(F, x, undefined, eps) as tf.Tensor2D;
  const wq = tf.mul(w.q, 1 / Math.sqrt(s.hd));
  const wqkv = tf.mul(tf.concat([wq, w.k, w.v], 1), column(w.norm));
  const y = tf.matMul(n1, wqkv) as tf.Tensor2D;
  if (F) return qkvHeads(F, y, rope, s);
  const heads = tf.transpose(tf.reshape(y, [s.B, s.T, s.H + 2 * s.Hkv, s.hd]), [0, 2, 1, 3]) as tf.Tensor4D;
  const [qk, v] = tf.split(heads, [s.H + s.Hkv, s.Hkv], 1) as [tf.Tensor4D, tf.Tensor4D];
  const [q, k] = tf.split(applyRope(F, qk, rope), [s.H, s.Hkv], 1) as [tf.Tensor4D, tf.Tensor4D];
  return { q, k, v };
}

/**
 * The head layout and RoPE of qkv as one native op each way, then one split: the reshape,
 * transpose, two splits and rope forward and their gradients backward (two concats, the inverse
 * rope, a transpose) were ~8% of a quickstart step, mostly passes over memory
 * (bench/results/step-profile.json). Same arithmetic, so the same bits as the unfused form.
 */
function qkvHeads(F: FusedOps, y: tf.Tensor2D, { cos, sin }: RopeTables, s: Heads): { q: tf.Tensor4D; k: tf.Tensor4D; v: tf.Tensor4D } {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    (args[1] as tf.GradSaveFunc)([cos, sin]);
    return {
      value: F.qkvHeads(args[0] as tf.Tensor, cos, sin, s.H, s.Hkv),
      gradFunc: (dy: tf.Tensor, [sc, ss]: tf.Tensor[]) => F.qkvHeadsGrad(dy, sc, ss, s.H, s.Hkv),
    };
  });
  const [q, k, v] = tf.split(f(y) as tf.Tensor4D, [s.H, s.Hkv, s.Hkv], 1) as [tf.Tensor4D, tf.Tensor4D, tf.Tensor4D];
  return { q, k, v };
}

/** The MLP with the norm's weight folded into the gate and up weights (see qkv). */
function mlp(F: FusedOps | undefined, x: tf.Tensor2D, w: MlpWeights, eps: number): tf.Tensor2D {
  const n2 = rmsNorm(F, x, undefined, eps) as tf.Tensor2D;
  const w2 = column(w.norm);
  if (F) {
    const gu = tf.matMul(n2, tf.mul(tf.concat([w.gate, w.up], 1), w2)) as tf.Tensor2D;
    return tf.matMul(swigluPacked(F, gu), w.down) as tf.Tensor2D;
  }
  const gate = tf.matMul(n2, tf.mul(w.gate, w2)) as tf.Tensor2D;
  const up = tf.matMul(n2, tf.mul(w.up, w2)) as tf.Tensor2D;
  return tf.matMul(swiglu(gate, up), w.down) as tf.Tensor2D;
}

/**
 * RMSNorm with a hand-written gradient. With x̂ = x·r, r = (mean(x²) + eps)^(−1/2), g = dy·w:
 *   dx = r · (g − x̂ · mean(g · x̂))        dw = Σ_rows dy · x̂
 * Autodiff through the forward ops would take ~20 ops per norm; this takes 8 (one native op
 * each way with F). Without `w` it returns x̂ (g = dy), for the folded projections.
 */
function rmsNorm(F: FusedOps | undefined, x: tf.Tensor, w: tf.Tensor | undefined, eps: number): tf.Tensor {
  const normalize = (xi: tf.Tensor) => {
    if (F) return F.rmsNorm(xi, eps);
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(xi), -1, true), eps));
    return [tf.mul(xi, r), r];
  };
  const dxOf = (g: tf.Tensor, xhat: tf.Tensor, r: tf.Tensor) =>
    F ? F.rmsNormGrad(g, xhat, r) : tf.mul(r, tf.sub(g, tf.mul(xhat, tf.mean(tf.mul(g, xhat), -1, true))));
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
    const [xhat, r] = tf.tidy(() => normalize(xi));
    (args[2] as tf.GradSaveFunc)([xhat, r, wi]);
    return {
      value: tf.mul(xhat, wi),
      gradFunc: (dy: tf.Tensor, [sx, sr, sw]: tf.Tensor[]) =>
        tf.tidy(() => {
          const rows = [...Array(dy.rank - 1).keys()];
          return [dxOf(tf.mul(dy, sw), sx, sr), tf.sum(tf.mul(dy, sx), rows)];
        }),
    };
  });
  return norm(x, w);
}

/**
 * With F the gate and up weights are one [d, 2f] product and SwiGLU reads it packed: one MatMul
 * each way instead of two and no Add of the two input gradients; concatenating the [d, f]
 * weights and splitting their gradient is cheap, unlike splitting the [N, 2f] product.
 */
function swigluPacked(F: FusedOps, gu: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    (args[1] as tf.GradSaveFunc)([args[0] as tf.Tensor]);
    return { value: F.swigluPacked(args[0] as tf.Tensor2D), gradFunc: (dy: tf.Tensor, [sgu]: tf.Tensor[]) => F.swigluPackedGrad(dy, sgu) };
  });
  return f(gu) as tf.Tensor2D;
}

/**
 * SwiGLU silu(g)·u with a hand-written gradient. With s = sigmoid(g) and a = g·s = silu(g):
 *   du = dy · a        dg = dy · u · (s + a·(1 − s))        (silu'(g) = s·(1 + g·(1 − s)))
 * Autodiff through the separate silu and product took ~8 elementwise passes over [N, f]
 * backward; this takes 5. Without F, g and u come from two products rather than one fused
 * [d, 2f] one: splitting its output and concatenating the gradient moved more memory than the
 * second matmul call costs. (With F, swigluPacked reads the packed product.)
 */
function swiglu(gate: tf.Tensor2D, up: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [g, u] = args as [tf.Tensor2D, tf.Tensor2D];
    const [sg, a] = tf.tidy(() => {
      const s = tf.sigmoid(g);
      return [s, tf.mul(g, s)];
    });
    (args[2] as tf.GradSaveFunc)([sg, a, u]);
    return {
      value: tf.mul(a, u) as tf.Tensor2D,
      gradFunc: (dy: tf.Tensor, [ss, sa, su]: tf.Tensor[]) => tf.tidy(() => [tf.mul(tf.mul(dy, su), tf.add(ss, tf.mul(sa, tf.sub(1, ss)))), tf.mul(dy, sa)]),
    };
  });
  return f(gate, up) as tf.Tensor2D;
}

/**
 * x·cos + rotate_half(x)·sin with rotate_half as one exact matmul by a 0/±1 matrix (instead of
 * a split, a negation and a concat forward and their three gradients backward). With F: one
 * pass forward and the inverse rotation, one pass too, as the gradient; the tables are saved
 * because the caller's tidy may have disposed them by the time backprop runs.
 */
function applyRope(F: FusedOps | undefined, x: tf.Tensor4D, { cos, sin, rot }: RopeTables): tf.Tensor4D {
  if (F) {
    const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      (args[1] as tf.GradSaveFunc)([cos, sin]);
      return {
        value: F.rope(args[0] as tf.Tensor, cos, sin, false) as tf.Tensor4D,
        gradFunc: (dy: tf.Tensor, [sc, ss]: tf.Tensor[]) => F.rope(dy, sc, ss, true),
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

/** The document bias built on the device: a handful of ops over [B, T, T] (one pass with F) instead of a host loop and an upload per batch. */
function documentBias(F: FusedOps | undefined, docIds: tf.Tensor2D, causal: tf.Tensor4D, g: number): tf.Tensor4D {
  if (F) return F.documentBias(docIds, g, MASKED);
  return tf.tidy(() => {
    const [B, T] = docIds.shape;
    const other = tf.notEqual(tf.reshape(docIds, [B, 1, T, 1]), tf.reshape(docIds, [B, 1, 1, T]));
    const bias = tf.minimum(tf.mul(tf.cast(other, 'float32'), MASKED), causal);
    return (g === 1 ? bias : tf.tile(bias, [1, 1, g, 1])) as tf.Tensor4D;
  });
}

/**
 * Attention on q pre-scaled by 1/√hd (qkv folds the scale into Wq). The g query heads that
 * share a key/value head (HF repeat_kv: head h uses kv head ⌊h/g⌋) are reshaped into one
 * [g·T, hd] block, so keys and values are never copied g times. With F: one op each way
 * (products, masked softmax and the output layout in cache-sized tiles, keys past the causal
 * limit skipped).
 */
function attention(F: FusedOps | undefined, q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, bias: tf.Tensor4D): tf.Tensor2D {
  if (F) {
    const f = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
      const [qi, ki, vi] = args as tf.Tensor4D[];
      const [out, probs] = F.attention(qi, ki, vi, bias);
      (args[3] as tf.GradSaveFunc)([qi, ki, vi, probs]);
      return { value: out, gradFunc: (dy: tf.Tensor, [sq, sk, sv, sp]: tf.Tensor[]) => F.attentionGrad(dy, sq, sk, sv, sp) };
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
    const probs = tf.tidy(() => tf.softmax(tf.add(tf.matMul(qi, ki, false, true), bias)));
    const out = tf.matMul(probs, vi) as tf.Tensor4D;
    (args[3] as tf.GradSaveFunc)([probs, qi, ki, vi, out]);
    return {
      value: out,
      gradFunc: (dy: tf.Tensor, [sp, sq, sk, sv, so]: tf.Tensor[]) =>
        tf.tidy(() => {
          const rowSums = tf.sum(tf.mul(dy, so), -1, true);
          const ds = tf.mul(sp, tf.sub(tf.matMul(dy, sv, false, true), rowSums));
          return [tf.matMul(ds, sk), tf.matMul(ds, sq, true, false), tf.matMul(sp, dy, true, false)];
        }),
    };
  });
  return f(q, k, v) as tf.Tensor4D;
}

/** logits = h·wᵀ (tied embedding w [V, d]) or h·w (lm_head [d, V]). */
const logitsOf = (h: tf.Tensor2D, w: tf.Tensor2D, tied: boolean) => (tied ? tf.matMul(h, w, false, true) : tf.matMul(h, w)) as tf.Tensor2D;

/**
 * The output head and the weighted cross-entropy as one op, with a hand-written gradient.
 * Only three passes touch the [N, V] logits, the step's largest tensor (see headCrossEntropyTfjs);
 * with F one pass gives the loss and G = (P − onehot(t))·scale (native/ndbg_ops.cc), and the
 * backward is two products with G: dh = G·w (tied) and dw = (hᵀ·G)ᵀ, the transposed form because
 * TensorFlow's MatMul with a transposed [N, V] left operand ran slower than the product plus a
 * [d, V] transpose (bench/results/kernels.json times the whole op).
 */
function headCrossEntropy(F: FusedOps | undefined, h: tf.Tensor2D, w: tf.Tensor2D, tied: boolean, targets: Int32Array, weights: Float32Array, reduction: 'mean' | 'sum'): tf.Scalar {
  const N = h.shape[0];
  const V = tied ? w.shape[0] : w.shape[1];
  const { scale, flat } = lossScales(N, V, targets, weights, reduction);
  if (!F) return headCrossEntropyTfjs(h, w, tied, targets, scale, flat);
  const fce = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [hi, wi] = args as [tf.Tensor2D, tf.Tensor2D];
    const [value, g] = tf.tidy(() => F.softmaxXent(logitsOf(hi, wi, tied), tf.tensor1d(targets, 'int32'), tf.tensor1d(scale)));
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

/**
 * The tfjs form: the softmax P, and two row maxima that give log-sum-exp without an exp pass or
 * underflow: lse = max(logits) − log(max(P)), since max(P) = exp(max − lse) ≥ 1/V. The loss
 * picks logits[t] by flat index. The gradient (P − onehot(t))·scale is never built densely:
 * with rs = scale·dy per row,
 *   tied:   dh = (P·w − w[t])·rs                  dw = Pᵀ·(h·rs) − Σ_{i: t_i = v} (h·rs)_i
 *   untied: dh = (P·wᵀ − (w[:, t])ᵀ)·rs           dw = (h·rs)ᵀ·P − (the same scatter)ᵀ
 * where the onehot parts are a row gather and a scatter-add over [N, d].
 */
function headCrossEntropyTfjs(h: tf.Tensor2D, w: tf.Tensor2D, tied: boolean, targets: Int32Array, scale: Float32Array, flat: Int32Array): tf.Scalar {
  const [N] = h.shape;
  const V = tied ? w.shape[0] : w.shape[1];
  const ce = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
    const [hi, wi] = args as [tf.Tensor2D, tf.Tensor2D];
    const [probs, value] = tf.tidy(() => {
      const logits = logitsOf(hi, wi, tied);
      const p = tf.softmax(logits);
      const lse = tf.sub(tf.max(logits, 1), tf.log(tf.max(p, 1)));
      const picked = tf.gather(tf.reshape(logits, [-1]), tf.tensor1d(flat, 'int32'));
      return [p, tf.sum(tf.mul(tf.sub(lse, picked), tf.tensor1d(scale)))] as [tf.Tensor2D, tf.Scalar];
    });
    (args[2] as tf.GradSaveFunc)([probs, hi, wi]);
    const gradFunc = (dy: tf.Tensor, [sp, sh, sw]: tf.Tensor[]) =>
      tf.tidy(() => {
        const t = tf.tensor1d(targets, 'int32');
        const rowScale = tf.mul(tf.reshape(tf.tensor1d(scale), [N, 1]), dy);
        const hs = tf.mul(sh, rowScale);
        const picked = tf.unsortedSegmentSum(hs, t, V);
        if (tied) return [tf.mul(tf.sub(tf.matMul(sp, sw), tf.gather(sw, t)), rowScale), tf.sub(tf.matMul(sp, hs, true, false), picked)];
        const dh = tf.mul(tf.sub(tf.matMul(sp, sw, false, true), tf.transpose(tf.gather(sw, t, 1))), rowScale);
        return [dh, tf.sub(tf.matMul(hs, sp, true, false), tf.transpose(picked))];
      });
    return { value, gradFunc };
  });
  return ce(h, w) as tf.Scalar;
}

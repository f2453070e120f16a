import * as tf from '@tensorflow/tfjs-core';
import type { TokenBatch } from '../data/batch';
import { Rng } from '../util/rng';
import { UserError } from '../util/errors';
import { ModelConfig, headDim, parameterShapes } from './config';
import { NamedTensor, TensorMap } from './safetensors';
import { registerGradients } from './gradients';
import { applyRope, attention, attentionBias, documentBias, headCrossEntropy, rmsNorm, ropeTables, rotateHalfMatrix, swiglu } from './layers';

/**
 * A Llama-style decoder-only transformer in tfjs ops:
 *   x = embed[ids]
 *   for each layer: x += o_proj(attn(rope(q_proj(n1)), rope(k_proj(n1)), v_proj(n1))),  n1 = rmsnorm(x)
 *                   x += down_proj(silu(gate_proj(n2)) · up_proj(n2)),                    n2 = rmsnorm(x)
 *   logits = rmsnorm(x) · headᵀ   (head = embed when tied)
 *
 * Parameters carry HF Llama names (model.layers.{i}.self_attn.q_proj.weight, ...). Linear weights
 * are stored [in, out] so every projection is an untransposed 2-D matmul (the fast path on wasm);
 * HF stores [out, in], so export/import transposes them (src/model/hf.ts). Embeddings are [V, d]
 * in both.
 *
 * Init (deterministic from the seed; each tensor has its own stream Rng.from(seed, 'init', name)):
 * normal(0, init_std) for every matrix, except the residual projections o_proj and down_proj which
 * get init_std/sqrt(2·n_layers) (GPT-2's scaling, so the residual stream's variance does not grow
 * with depth); RMSNorm weights are 1.
 */
/** Per-layer key/value tensors [1|B, Hkv, S, hd] for incremental decoding. */
export interface KvCache {
  k: tf.Tensor4D[];
  v: tf.Tensor4D[];
  length: number;
}

let nextInstance = 0;

export class LlamaModel {
  readonly params = new Map<string, tf.Variable>();
  private readonly cos: tf.Tensor2D;
  private readonly sin: tf.Tensor2D;
  private readonly rot: tf.Tensor2D;
  private readonly biasCache = new Map<string, tf.Tensor4D>();

  private constructor(readonly config: ModelConfig, init: (name: string, shape: number[]) => Float32Array) {
    registerGradients();
    // tfjs variable names are global to the process; the suffix lets several models coexist.
    const instance = nextInstance++;
    for (const [name, shape] of parameterShapes(config)) {
      const initial = tf.tensor(init(name, shape), shape, 'float32');
      this.params.set(name, tf.variable(initial, true, `${name}/${instance}`));
      initial.dispose();
    }
    const { cos, sin } = ropeTables(config.max_seq_len, headDim(config), config.rope_theta);
    this.cos = tf.keep(tf.tensor2d(cos, [config.max_seq_len, headDim(config)]));
    this.sin = tf.keep(tf.tensor2d(sin, [config.max_seq_len, headDim(config)]));
    this.rot = tf.keep(tf.tensor2d(rotateHalfMatrix(headDim(config)), [headDim(config), headDim(config)]));
  }

  /** A freshly initialised model; same config and seed give the same weights bit for bit. */
  static create(config: ModelConfig, seed: number): LlamaModel {
    const residual = config.init_std / Math.sqrt(2 * config.n_layers);
    return new LlamaModel(config, (name, shape) => {
      const n = shape.reduce((a, b) => a * b, 1);
      const out = new Float32Array(n);
      if (shape.length === 1) return out.fill(1);
      const std = /\.(o_proj|down_proj)\.weight$/.test(name) ? residual : config.init_std;
      const rng = Rng.from(seed, 'init', name);
      for (let i = 0; i < n; i++) out[i] = rng.normal() * std;
      return out;
    });
  }

  /** Throws a UserError naming the first problems if `weights` do not fit `config` exactly. */
  static checkWeights(config: ModelConfig, weights: TensorMap, source = 'weights'): void {
    const expected = new Map(parameterShapes(config));
    const missing = [...expected.keys()].filter((n) => !weights.has(n));
    if (missing.length) throw new UserError(`${source}: missing tensors ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ` and ${missing.length - 5} more` : ''}`);
    const extra = [...weights.keys()].filter((n) => !expected.has(n));
    if (extra.length) throw new UserError(`${source}: unexpected tensors ${extra.slice(0, 5).join(', ')} (config mismatch?)`);
    for (const [name, shape] of expected) {
      const t = weights.get(name) as NamedTensor;
      if (t.shape.join(',') !== shape.join(',')) throw new UserError(`${source}: ${name} has shape [${t.shape}], the config needs [${shape}]`);
    }
  }

  /** A model holding the given weights (model layout, see getWeights); every parameter must be present. */
  static fromWeights(config: ModelConfig, weights: TensorMap, source = 'weights'): LlamaModel {
    LlamaModel.checkWeights(config, weights, source);
    return new LlamaModel(config, (name) => (weights.get(name) as NamedTensor).data);
  }

  private p(name: string): tf.Variable {
    return this.params.get(name) as tf.Variable;
  }

  /** Trainable variables by HF name (for tf.variableGrads / optimizers). */
  trainableVariables(): Map<string, tf.Variable> {
    return this.params;
  }

  /**
   * Loss and its gradient for every parameter, by HF name. The caller disposes the tensors
   * (e.g. after its optimizer step); nothing else is left allocated.
   */
  lossAndGrads(batch: TokenBatch): { loss: tf.Scalar; grads: Map<string, tf.Tensor> } {
    const { value, grads } = tf.variableGrads(() => this.loss(batch), [...this.params.values()]);
    const byName = new Map<string, tf.Tensor>();
    for (const [name, v] of this.params) byName.set(name, grads[v.name]);
    return { loss: value, grads: byName };
  }

  /** Copies of all weights as Float32Arrays, by name, in the model's own layout. */
  getWeights(): TensorMap {
    const out: TensorMap = new Map();
    for (const [name, v] of this.params) out.set(name, { shape: [...v.shape], data: v.dataSync() as Float32Array });
    return out;
  }

  setWeights(weights: TensorMap): void {
    for (const [name, t] of weights) {
      const v = this.params.get(name);
      if (!v) throw new UserError(`setWeights: unknown tensor ${name}`);
      if (v.shape.join(',') !== t.shape.join(',')) throw new UserError(`setWeights: ${name} has shape [${t.shape}], expected [${v.shape}]`);
      tf.tidy(() => v.assign(tf.tensor(t.data, t.shape, 'float32')));
    }
  }

  dispose(): void {
    for (const v of this.params.values()) v.dispose();
    for (const t of this.biasCache.values()) t.dispose();
    this.cos.dispose();
    this.sin.dispose();
    this.rot.dispose();
  }

  private causalBias(T: number, S: number, offset: number, g: number): tf.Tensor4D {
    const key = `${T},${S},${offset},${g}`;
    let b = this.biasCache.get(key);
    if (!b) {
      if (this.biasCache.size > 64) {
        for (const t of this.biasCache.values()) t.dispose();
        this.biasCache.clear();
      }
      b = tf.keep(attentionBias(T, S, offset, g));
      this.biasCache.set(key, b);
    }
    return b;
  }

  /**
   * Final hidden states [B·T, d] (after the last RMSNorm) for ids [B, T] at positions
   * offset..offset+T−1. With a cache, keys/values of earlier positions come from it and the
   * new ones are appended (the caller owns the returned cache tensors).
   */
  private hidden(ids: tf.Tensor2D, docIds: tf.Tensor2D | undefined, cache?: KvCache): { h: tf.Tensor2D; cache?: KvCache } {
    const c = this.config;
    const [B, T] = ids.shape;
    const hd = headDim(c);
    const g = c.n_heads / c.n_kv_heads;
    const offset = cache?.length ?? 0;
    if (offset + T > c.max_seq_len) throw new UserError(`sequence of ${offset + T} tokens exceeds max_seq_len ${c.max_seq_len}`);
    const cos = tf.slice(this.cos, [offset, 0], [T, hd]);
    const sin = tf.slice(this.sin, [offset, 0], [T, hd]);
    const S = offset + T;
    const bias = docIds && c.doc_attention_mask && !cache ? documentBias(docIds, this.causalBias(T, T, 0, 1), g) : this.causalBias(T, S, offset, g);
    const H = c.n_heads;
    const Hkv = c.n_kv_heads;
    let x = tf.gather(this.p('model.embed_tokens.weight'), tf.reshape(ids, [-1])) as tf.Tensor2D;
    const newCache: KvCache | undefined = cache ? { k: [], v: [], length: S } : undefined;
    for (let i = 0; i < c.n_layers; i++) {
      const l = `model.layers.${i}`;
      // One product for q, k and v ([d, d] weights concatenated: cheap, and one large matmul
      // runs faster than three), heads split once. The norm's weight scales the rows of the
      // fused weight (see rmsNorm) and the attention scale 1/√hd rides on Wq.
      const n1 = rmsNorm(x, undefined, c.norm_eps) as tf.Tensor2D;
      const wq = tf.mul(this.p(`${l}.self_attn.q_proj.weight`), 1 / Math.sqrt(hd));
      const wqkv = tf.mul(tf.concat([wq, this.p(`${l}.self_attn.k_proj.weight`), this.p(`${l}.self_attn.v_proj.weight`)], 1), this.normColumn(`${l}.input_layernorm.weight`));
      const qkv = tf.transpose(tf.reshape(tf.matMul(n1, wqkv), [B, T, H + 2 * Hkv, hd]), [0, 2, 1, 3]) as tf.Tensor4D;
      const [qk, v0] = tf.split(qkv, [H + Hkv, Hkv], 1) as [tf.Tensor4D, tf.Tensor4D];
      // RoPE on the q and k heads at once.
      const [q, k0] = tf.split(applyRope(qk, cos, sin, this.rot), [H, Hkv], 1) as [tf.Tensor4D, tf.Tensor4D];
      let k = k0;
      let v = v0;
      if (cache && newCache) {
        if (offset > 0) {
          k = tf.concat([cache.k[i], k], 2);
          v = tf.concat([cache.v[i], v], 2);
        }
        newCache.k.push(tf.keep(k));
        newCache.v.push(tf.keep(v));
      }
      const a = attention(q, k, v, bias);
      x = tf.add(x, tf.matMul(a, this.p(`${l}.self_attn.o_proj.weight`)));
      const n2 = rmsNorm(x, undefined, c.norm_eps) as tf.Tensor2D;
      const w2 = this.normColumn(`${l}.post_attention_layernorm.weight`);
      const gate = tf.matMul(n2, tf.mul(this.p(`${l}.mlp.gate_proj.weight`), w2)) as tf.Tensor2D;
      const up = tf.matMul(n2, tf.mul(this.p(`${l}.mlp.up_proj.weight`), w2)) as tf.Tensor2D;
      x = tf.add(x, tf.matMul(swiglu(gate, up), this.p(`${l}.mlp.down_proj.weight`)));
    }
    return { h: rmsNorm(x, this.p('model.norm.weight'), c.norm_eps) as tf.Tensor2D, cache: newCache };
  }

  /** The named RMSNorm weight as a column [d, 1]: multiplying a [d, out] weight by it is diag(w)·W. */
  private normColumn(normWeight: string): tf.Tensor2D {
    return tf.reshape(this.p(normWeight), [-1, 1]) as tf.Tensor2D;
  }

  private head(h: tf.Tensor2D): tf.Tensor2D {
    return this.config.tie_embeddings
      ? tf.matMul(h, this.p('model.embed_tokens.weight'), false, true)
      : tf.matMul(h, this.p('lm_head.weight'));
  }

  /** Logits [B, T, V] for ids [B, T] (optionally with document ids [B, T] for the document mask). */
  logits(ids: Int32Array[], docIds?: Int32Array[]): tf.Tensor3D {
    const B = ids.length;
    const T = ids[0]?.length ?? 0;
    return tf.tidy(() => {
      const { h } = this.hidden(toIds(ids), docIds && toIds(docIds.map((d) => d.subarray(0, T))));
      return tf.reshape(this.head(h), [B, T, this.config.vocab_size]) as tf.Tensor3D;
    });
  }

  /** Mean next-token cross-entropy over the batch's targets (TokenBatch's lossMask, src/data/batch.ts). */
  loss(batch: TokenBatch): tf.Scalar {
    return this.crossEntropy(batch, 'mean');
  }

  /**
   * The sum over the batch's targets instead of the mean: micro-batches add up, and the trainer
   * divides once by the step's target count. Usable inside tf.variableGrads (all tidied).
   */
  lossSum(batch: TokenBatch): tf.Scalar {
    return this.crossEntropy(batch, 'sum');
  }

  private crossEntropy(batch: TokenBatch, reduction: 'mean' | 'sum'): tf.Scalar {
    const { batchSize: B, seqLen: T, ids, lossMask } = batch;
    const w = T + 1;
    if (B === 0) throw new Error('loss: empty batch');
    if (T < 1) throw new Error('loss: ids must be [B, T+1] with T ≥ 1');
    if (ids.length !== B * w || lossMask.length !== B * w) throw new Error(`loss: ids and lossMask must hold ${B}×${w} values`);
    const inputs = new Int32Array(B * T);
    const targets = new Int32Array(B * T);
    const weights = new Float32Array(B * T);
    for (let b = 0; b < B; b++) {
      inputs.set(ids.subarray(b * w, b * w + T), b * T);
      targets.set(ids.subarray(b * w + 1, (b + 1) * w), b * T);
      for (let t = 0; t < T; t++) weights[b * T + t] = lossMask[b * w + t + 1] ? 1 : 0;
    }
    let docIds: Int32Array | undefined;
    if (batch.docIds) {
      docIds = new Int32Array(B * T);
      for (let b = 0; b < B; b++) docIds.set(batch.docIds.subarray(b * w, b * w + T), b * T);
    }
    return tf.tidy(() => {
      const { h } = this.hidden(tf.tensor2d(inputs, [B, T], 'int32'), docIds && tf.tensor2d(docIds, [B, T], 'int32'));
      const tied = this.config.tie_embeddings;
      return headCrossEntropy(h, this.p(tied ? 'model.embed_tokens.weight' : 'lm_head.weight') as tf.Tensor2D, tied, targets, weights, reduction);
    });
  }

  /**
   * Incremental decoding: runs ids [B, T] at positions cache.length.., returns logits of the
   * last position [B, V] and the extended cache. The input cache is not disposed (callers use
   * disposeCache on the one they drop).
   */
  decode(ids: Int32Array[], cache?: KvCache): { logits: tf.Tensor2D; cache: KvCache } {
    const start: KvCache = cache ?? { k: [], v: [], length: 0 };
    let outCache: KvCache | undefined;
    const logits = tf.tidy(() => {
      const { h, cache: c } = this.hidden(toIds(ids), undefined, start);
      outCache = c;
      const B = ids.length;
      const T = ids[0].length;
      const last = tf.reshape(tf.slice(tf.reshape(h, [B, T, -1]), [0, T - 1, 0], [B, 1, -1]), [B, -1]) as tf.Tensor2D;
      return this.head(last);
    });
    return { logits, cache: outCache as KvCache };
  }
}

export function disposeCache(cache: KvCache | undefined): void {
  if (!cache) return;
  for (const t of [...cache.k, ...cache.v]) t.dispose();
}

function toIds(ids: Int32Array[]): tf.Tensor2D {
  const B = ids.length;
  const T = ids[0].length;
  const flat = new Int32Array(B * T);
  ids.forEach((row, b) => {
    if (row.length !== T) throw new Error(`ids: row ${b} has ${row.length} tokens, expected ${T}`);
    flat.set(row, b * T);
  });
  return tf.tensor2d(flat, [B, T], 'int32');
}

import * as tf from '@tensorflow/tfjs-core';
import type { TokenBatch } from '../data/batch';
import { Rng } from '../util/rng';
import { UserError } from '../util/errors';
import { ModelConfig, headDim, parameterShapes } from './config';
import { NamedTensor, TensorMap } from './safetensors';
import { registerGradients } from '../backend/gradients';
import { backendKernels, type KernelSet } from '../backend/kernels';
import type { AttentionWeights, MlpWeights } from '../backend/kernel_set';
import { attentionBias, paddedAttentionBias, ropeTables, rotateHalfMatrix } from './layers';

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
 *
 * Each block runs on a KernelSet (src/backend/kernel_set.ts): by default the one chosen when the
 * backend started (the fused set), or REFERENCE_KERNELS (src/model/layers.ts), the same
 * equations as plain tfjs ops, when a caller passes it.
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

  private constructor(readonly config: ModelConfig, init: (name: string, shape: number[]) => Float32Array, readonly kernels: KernelSet) {
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
  static create(config: ModelConfig, seed: number, kernels: KernelSet = backendKernels()): LlamaModel {
    const residual = config.init_std / Math.sqrt(2 * config.n_layers);
    return new LlamaModel(config, (name, shape) => {
      const n = shape.reduce((a, b) => a * b, 1);
      const out = new Float32Array(n);
      if (shape.length === 1) return out.fill(1);
      const std = /\.(o_proj|down_proj)\.weight$/.test(name) ? residual : config.init_std;
      const rng = Rng.from(seed, 'init', name);
      for (let i = 0; i < n; i++) out[i] = rng.normal() * std;
      return out;
    }, kernels);
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
  static fromWeights(config: ModelConfig, weights: TensorMap, source = 'weights', kernels: KernelSet = backendKernels()): LlamaModel {
    LlamaModel.checkWeights(config, weights, source);
    return new LlamaModel(config, (name) => (weights.get(name) as NamedTensor).data, kernels);
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
  private hidden(ids: tf.Tensor2D, docIds: tf.Tensor2D | undefined, cache?: KvCache, padLeft?: readonly number[]): { h: tf.Tensor2D; cache?: KvCache } {
    const c = this.config;
    const K = this.kernels;
    const [B, T] = ids.shape;
    const heads = { B, T, H: c.n_heads, Hkv: c.n_kv_heads, hd: headDim(c) };
    const g = c.n_heads / c.n_kv_heads;
    const offset = cache?.length ?? 0;
    if (offset + T > c.max_seq_len) throw new UserError(`sequence of ${offset + T} tokens exceeds max_seq_len ${c.max_seq_len}`);
    const rope = { cos: tf.slice(this.cos, [offset, 0], [T, heads.hd]), sin: tf.slice(this.sin, [offset, 0], [T, heads.hd]), rot: this.rot };
    const S = offset + T;
    const padded = padLeft?.some((p) => p > 0);
    const bias = padded
      ? paddedAttentionBias(T, S, offset, g, padLeft as readonly number[])
      : docIds && c.doc_attention_mask && !cache
        ? K.documentBias(docIds, this.causalBias(T, T, 0, 1), g)
        : this.causalBias(T, S, offset, g);
    let x = tf.gather(this.p('model.embed_tokens.weight'), tf.reshape(ids, [-1])) as tf.Tensor2D;
    const newCache: KvCache | undefined = cache ? { k: [], v: [], length: S } : undefined;
    for (let i = 0; i < c.n_layers; i++) {
      const l = `model.layers.${i}`;
      // x += o_proj(attention(q, k, v)),  q, k, v = rope(proj(rmsnorm(x)))
      let { q, k, v } = K.qkv(x, this.attentionWeights(l), heads, rope, c.norm_eps);
      if (cache && newCache) {
        if (offset > 0) {
          k = tf.concat([cache.k[i], k], 2);
          v = tf.concat([cache.v[i], v], 2);
        }
        newCache.k.push(tf.keep(k));
        newCache.v.push(tf.keep(v));
      }
      x = tf.add(x, tf.matMul(K.attention(q, k, v, bias), this.p(`${l}.self_attn.o_proj.weight`)));
      // x += down_proj(silu(gate_proj(n)) · up_proj(n)),  n = rmsnorm(x)
      x = tf.add(x, K.mlp(x, this.mlpWeights(l), c.norm_eps));
    }
    return { h: K.rmsNorm(x, this.p('model.norm.weight'), c.norm_eps), cache: newCache };
  }

  private attentionWeights(l: string): AttentionWeights {
    const w = (n: string) => this.p(`${l}.${n}.weight`) as tf.Tensor2D;
    return { norm: w('input_layernorm'), q: w('self_attn.q_proj'), k: w('self_attn.k_proj'), v: w('self_attn.v_proj') };
  }

  private mlpWeights(l: string): MlpWeights {
    const w = (n: string) => this.p(`${l}.${n}.weight`) as tf.Tensor2D;
    return { norm: w('post_attention_layernorm'), gate: w('mlp.gate_proj'), up: w('mlp.up_proj'), down: w('mlp.down_proj') };
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
      return this.kernels.headCrossEntropy(h, this.p(tied ? 'model.embed_tokens.weight' : 'lm_head.weight') as tf.Tensor2D, tied, targets, weights, reduction);
    });
  }

  /**
   * Incremental decoding: runs ids [B, T] at positions cache.length.., returns logits of the
   * last position [B, V] and the extended cache. The input cache is not disposed (callers use
   * disposeCache on the one they drop). With padLeft, row b's first padLeft[b] positions are
   * padding no position attends to (prompts of different lengths, left-aligned to one length:
   * generate_batch.ts); RoPE scores depend only on relative positions, so a padded row computes
   * what it would alone, up to float rounding.
   */
  decode(ids: Int32Array[], cache?: KvCache, padLeft?: readonly number[]): { logits: tf.Tensor2D; cache: KvCache } {
    if (padLeft && padLeft.length !== ids.length) throw new Error(`decode: padLeft has ${padLeft.length} rows, ids ${ids.length}`);
    const start: KvCache = cache ?? { k: [], v: [], length: 0 };
    let outCache: KvCache | undefined;
    const logits = tf.tidy(() => {
      const { h, cache: c } = this.hidden(toIds(ids), undefined, start, padLeft);
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

/** The cache of the given batch rows, in that order (the caller disposes the input cache). */
export function gatherCache(cache: KvCache, rows: readonly number[]): KvCache {
  const idx = tf.tensor1d(Int32Array.from(rows), 'int32');
  const out = { k: cache.k.map((t) => tf.gather(t, idx)), v: cache.v.map((t) => tf.gather(t, idx)), length: cache.length };
  idx.dispose();
  return out;
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

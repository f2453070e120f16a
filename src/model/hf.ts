import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { ModelConfig, resolveModelConfig } from './config';
import { HF_WEIGHTS_METADATA, isNdbgLayout, NamedTensor, readSafetensors, TensorMap, writeSafetensors } from './safetensors';

/**
 * Conversion to and from the Hugging Face Llama layout (transformers' LlamaForCausalLM):
 * same tensor names; linear weights transposed ([in, out] here, [out, in] in HF); a tied head
 * is not stored (transformers re-ties it from tie_word_embeddings).
 */
const LINEAR = /(_proj\.weight|^lm_head\.weight)$/;

export function transpose2d(t: NamedTensor): NamedTensor {
  const [r, c] = t.shape;
  const out = new Float32Array(r * c);
  for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) out[j * r + i] = t.data[i * c + j];
  return { shape: [c, r], data: out };
}

export function toHfTensors(weights: TensorMap): TensorMap {
  const out: TensorMap = new Map();
  for (const [name, t] of weights) out.set(name, LINEAR.test(name) ? transpose2d(t) : t);
  return out;
}

export function fromHfTensors(tensors: TensorMap, config: ModelConfig): TensorMap {
  const out: TensorMap = new Map();
  for (const [name, t] of tensors) {
    if (name === 'lm_head.weight' && config.tie_embeddings) continue;
    if (/rotary_emb\.inv_freq$/.test(name)) continue; // old transformers saved this buffer
    out.set(name, LINEAR.test(name) ? transpose2d(t) : t);
  }
  return out;
}

export interface HfSpecialIds {
  bos_token_id?: number;
  eos_token_id?: number;
  pad_token_id?: number;
}

export function toHfConfig(c: ModelConfig, ids: HfSpecialIds = {}): Record<string, unknown> {
  return {
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    vocab_size: c.vocab_size,
    hidden_size: c.d_model,
    intermediate_size: c.d_ff,
    num_hidden_layers: c.n_layers,
    num_attention_heads: c.n_heads,
    num_key_value_heads: c.n_kv_heads,
    head_dim: c.d_model / c.n_heads,
    max_position_embeddings: c.max_seq_len,
    rms_norm_eps: c.norm_eps,
    // rope_theta for transformers 4, rope_parameters for transformers 5 (both read by both).
    rope_theta: c.rope_theta,
    rope_parameters: { rope_type: 'default', rope_theta: c.rope_theta },
    tie_word_embeddings: c.tie_embeddings,
    hidden_act: 'silu',
    attention_bias: false,
    mlp_bias: false,
    attention_dropout: 0,
    initializer_range: c.init_std,
    torch_dtype: 'float32',
    ...ids,
  };
}

/**
 * The RoPE base of a LlamaConfig: transformers 4 writes `rope_theta` (+ `rope_scaling`),
 * transformers 5 `rope_parameters: {rope_type, rope_theta, ...}`. Only plain RoPE is
 * implemented here, so any scaling type or extra parameter is refused (by name), never ignored.
 */
const PLAIN_ROPE_TYPES = new Set(['default']);
const PLAIN_ROPE_FIELDS = new Set(['rope_type', 'type', 'rope_theta']);

export function ropeThetaOf(hf: Record<string, unknown>, source: string): number {
  const problems: string[] = [];
  let theta: number | undefined;
  const take = (v: unknown, field: string) => {
    if (v === undefined || v === null) return;
    if (typeof v !== 'number' || !(v > 0)) {
      problems.push(`${field} ${JSON.stringify(v)} is not a positive number`);
      return;
    }
    if (theta !== undefined && theta !== v) problems.push(`${field} ${v} contradicts rope_theta ${theta}`);
    theta = v;
  };
  take(hf.rope_theta, 'rope_theta');
  for (const key of ['rope_parameters', 'rope_scaling'] as const) {
    const p = hf[key];
    if (p === undefined || p === null) continue;
    if (typeof p !== 'object' || Array.isArray(p)) {
      problems.push(`${key} must be an object, got ${JSON.stringify(p)}`);
      continue;
    }
    const params = p as Record<string, unknown>;
    const type = params.rope_type ?? params.type ?? 'default';
    if (typeof type !== 'string' || !PLAIN_ROPE_TYPES.has(type)) {
      problems.push(`${key}.rope_type ${JSON.stringify(type)} (only "default" RoPE is implemented)`);
    }
    const extra = Object.keys(params).filter((k) => !PLAIN_ROPE_FIELDS.has(k));
    if (extra.length) problems.push(`${key} fields ${extra.join(', ')} (not implemented)`);
    take(params.rope_theta, `${key}.rope_theta`);
  }
  if (problems.length) throw new UserError(`${source}: unsupported RoPE settings: ${problems.join('; ')}`);
  return theta ?? 10000;
}

/** LlamaConfig → model config; rejects features this model does not implement, naming the field. */
export function fromHfConfig(hf: Record<string, unknown>, source: string): ModelConfig {
  const unsupported: string[] = [];
  if (hf.model_type !== undefined && hf.model_type !== 'llama') unsupported.push(`model_type ${JSON.stringify(hf.model_type)} (need "llama")`);
  if (hf.hidden_act !== undefined && hf.hidden_act !== 'silu') unsupported.push(`hidden_act ${JSON.stringify(hf.hidden_act)}`);
  if (hf.attention_bias === true) unsupported.push('attention_bias');
  if (hf.mlp_bias === true) unsupported.push('mlp_bias');
  const hidden = hf.hidden_size as number;
  const heads = hf.num_attention_heads as number;
  if (hf.head_dim !== undefined && hf.head_dim !== null && hf.head_dim !== hidden / heads) unsupported.push(`head_dim ${hf.head_dim} ≠ hidden_size/num_attention_heads`);
  if (unsupported.length) throw new UserError(`${source}: unsupported Llama features: ${unsupported.join(', ')}`);
  const ropeTheta = ropeThetaOf(hf, source);
  return resolveModelConfig(
    {
      vocab_size: hf.vocab_size,
      d_model: hidden,
      n_layers: hf.num_hidden_layers,
      n_heads: heads,
      n_kv_heads: hf.num_key_value_heads ?? heads,
      d_ff: hf.intermediate_size,
      max_seq_len: hf.max_position_embeddings,
      rope_theta: ropeTheta,
      norm_eps: hf.rms_norm_eps ?? 1e-6,
      tie_embeddings: hf.tie_word_embeddings ?? false,
      init_std: hf.initializer_range ?? 0.02,
    },
    `${source} (converted from LlamaConfig)`,
  );
}

/** Writes config.json and model.safetensors of an HF Llama model directory. */
export function writeHfModel(dir: string, config: ModelConfig, weights: TensorMap, ids: HfSpecialIds = {}): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(toHfConfig(config, ids), null, 2) + '\n');
  const hf = toHfTensors(weights);
  writeSafetensors(path.join(dir, 'model.safetensors'), hf, HF_WEIGHTS_METADATA);
}

/** Reads an HF Llama directory: config.json plus model.safetensors or a sharded index. */
export function readHfModel(dir: string): { config: ModelConfig; weights: TensorMap } {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UserError(`Hugging Face model directory ${dir} does not exist`);
  const cfgFile = path.join(dir, 'config.json');
  let hf: Record<string, unknown>;
  try {
    hf = JSON.parse(fs.readFileSync(cfgFile, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new UserError(`cannot read ${cfgFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (hf && typeof hf === 'object' && 'model' in hf && !('model_type' in hf)) {
    throw new UserError(`${cfgFile} is an ndbg checkpoint config, not a Hugging Face one; use the directory as a checkpoint directly`);
  }
  const config = fromHfConfig(hf, cfgFile);
  const single = path.join(dir, 'model.safetensors');
  const index = path.join(dir, 'model.safetensors.index.json');
  const tensors: TensorMap = new Map();
  const add = (file: string) => {
    const st = readSafetensors(file);
    if (isNdbgLayout(st.metadata)) throw new UserError(`${file} is ndbg's own checkpoint layout, not a Hugging Face file; use it as a checkpoint directly`);
    for (const [k, v] of st.tensors) tensors.set(k, v);
  };
  if (fs.existsSync(single)) {
    add(single);
  } else if (fs.existsSync(index)) {
    let map: Record<string, string>;
    try {
      map = (JSON.parse(fs.readFileSync(index, 'utf8')) as { weight_map?: Record<string, string> }).weight_map ?? {};
    } catch (e) {
      throw new UserError(`cannot read ${index}: ${(e as Error).message}`);
    }
    for (const shard of new Set(Object.values(map))) add(path.join(dir, shard));
  } else {
    throw new UserError(`${dir}: no model.safetensors or model.safetensors.index.json`);
  }
  return { config, weights: fromHfTensors(tensors, config) };
}

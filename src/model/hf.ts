import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { ModelConfig, resolveModelConfig } from './config';
import { HF_WEIGHTS_METADATA, isNdbgLayout, NamedTensor, readSafetensors, StreamOptions, TensorMap, writeSafetensors } from './safetensors';

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

/**
 * Shards as transformers' `save_pretrained(max_shard_size=...)` cuts them (huggingface_hub's
 * split_state_dict_into_shards): tensors in order; a new shard starts when the next tensor would
 * take the current one past the limit; a tensor larger than the limit gets a shard of its own,
 * placed where it is met while the current shard stays open. Sizes are decimal ("5GB" = 5e9).
 */
export const DEFAULT_MAX_SHARD_SIZE = '5GB';
const SIZE_UNITS: Record<string, number> = { KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };

/** "5GB", "500MB", "2.5GB" or a byte count → bytes, as huggingface_hub's parse_size_to_int. */
export function parseShardSize(size: string | number, what = '--max-shard-size'): number {
  if (typeof size === 'number' || /^\s*\d+\s*$/.test(size)) {
    const n = Number(size);
    if (!Number.isInteger(n) || n < 1) throw new UserError(`${what}: ${size} must be a positive number of bytes`);
    return n;
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB)\s*$/i.exec(size);
  if (!m) throw new UserError(`${what}: ${JSON.stringify(size)} is not a size (e.g. 5GB, 500MB, 2.5GB or a byte count; units are decimal: KB MB GB TB)`);
  const bytes = Math.floor(Number(m[1]) * SIZE_UNITS[m[2].toUpperCase()]);
  if (bytes < 1) throw new UserError(`${what}: ${size} is zero bytes`);
  return bytes;
}

export function planShards(sizes: Array<[string, number]>, maxBytes: number): string[][] {
  const shards: string[][] = [];
  let current: string[] = [];
  let currentBytes = 0;
  for (const [name, bytes] of sizes) {
    if (bytes > maxBytes) {
      shards.push([name]);
      continue;
    }
    if (currentBytes + bytes > maxBytes) {
      shards.push(current);
      current = [];
      currentBytes = 0;
    }
    current.push(name);
    currentBytes += bytes;
  }
  if (current.length) shards.push(current);
  return shards;
}

export const HF_WEIGHTS_FILE = 'model.safetensors';
export const HF_INDEX_FILE = 'model.safetensors.index.json';

export function shardFileName(i: number, count: number): string {
  return `model-${String(i + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.safetensors`;
}

/** JSON as Python's json.dumps(indent=2, sort_keys=True) writes it (ASCII keys and values). */
export function pythonSortedJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])]));
    return v;
  };
  return JSON.stringify(sort(value), null, 2) + '\n';
}

/**
 * Writes config.json and the weights of an HF Llama model directory: model.safetensors when all
 * fits one shard, else model-0000i-of-0000n.safetensors plus model.safetensors.index.json. Each
 * shard's tensors are transposed to the HF layout just before it is written, so the extra memory
 * is one shard, not the model.
 */
export function writeHfModel(dir: string, config: ModelConfig, weights: TensorMap, ids: HfSpecialIds = {}, o: { maxShardBytes?: number } & StreamOptions = {}): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify(toHfConfig(config, ids), null, 2) + '\n');
  const maxBytes = o.maxShardBytes ?? parseShardSize(DEFAULT_MAX_SHARD_SIZE);
  const sizes: Array<[string, number]> = hfTensorOrder([...weights.keys()]).map((name) => [name, weights.get(name)!.data.byteLength]);
  const shards = planShards(sizes, maxBytes);
  const hfOf = (names: string[]): Array<[string, NamedTensor]> =>
    names.map((name) => {
      const t = weights.get(name)!;
      return [name, LINEAR.test(name) ? transpose2d(t) : t];
    });
  if (shards.length <= 1) {
    writeSafetensors(path.join(dir, HF_WEIGHTS_FILE), hfOf(shards[0] ?? []), HF_WEIGHTS_METADATA, o);
    return;
  }
  shards.forEach((names, i) => writeSafetensors(path.join(dir, shardFileName(i, shards.length)), hfOf(names), HF_WEIGHTS_METADATA, o));
  // Every stored tensor is a distinct parameter (a tied head is not stored), as num_parameters() counts.
  const totalParameters = [...weights.values()].reduce((a, t) => a + t.data.length, 0);
  fs.writeFileSync(path.join(dir, HF_INDEX_FILE), hfIndexJson(shards, sizes, totalParameters));
}

/** model.safetensors.index.json of a sharded save, byte for byte as transformers 5 writes it. */
export function hfIndexJson(shards: string[][], sizes: Array<[string, number]>, totalParameters: number): string {
  const weightMap: Record<string, string> = {};
  shards.forEach((names, i) => names.forEach((n) => (weightMap[n] = shardFileName(i, shards.length))));
  const totalSize = sizes.reduce((a, [, b]) => a + b, 0);
  return pythonSortedJson({ metadata: { total_parameters: totalParameters, total_size: totalSize }, weight_map: weightMap });
}

/**
 * Tensor names in the order of LlamaForCausalLM's state_dict (module registration order), which
 * is the order transformers shards in; with it the same limit cuts the same shards. Names the
 * order does not know keep their relative order at the end.
 */
const LAYER_ORDER = [
  'self_attn.q_proj.weight',
  'self_attn.k_proj.weight',
  'self_attn.v_proj.weight',
  'self_attn.o_proj.weight',
  'mlp.gate_proj.weight',
  'mlp.up_proj.weight',
  'mlp.down_proj.weight',
  'input_layernorm.weight',
  'post_attention_layernorm.weight',
];

export function hfTensorOrder(names: string[]): string[] {
  const rank = (name: string): [number, number, number] => {
    if (name === 'model.embed_tokens.weight') return [0, 0, 0];
    const m = /^model\.layers\.(\d+)\.(.+)$/.exec(name);
    if (m && LAYER_ORDER.includes(m[2])) return [1, Number(m[1]), LAYER_ORDER.indexOf(m[2])];
    if (name === 'model.norm.weight') return [2, 0, 0];
    if (name === 'lm_head.weight') return [3, 0, 0];
    return [4, 0, 0];
  };
  return names
    .map((n, i) => ({ n, i, r: rank(n) }))
    .sort((a, b) => a.r[0] - b.r[0] || a.r[1] - b.r[1] || a.r[2] - b.r[2] || a.i - b.i)
    .map((x) => x.n);
}

/** Reads an HF Llama directory: config.json plus model.safetensors or a sharded index (shards of any size). */
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
  const single = path.join(dir, HF_WEIGHTS_FILE);
  const index = path.join(dir, HF_INDEX_FILE);
  const weights: TensorMap = new Map();
  // Converted shard by shard, so the HF-layout copy of only one shard is alive at a time.
  const add = (file: string, expected?: string[]) => {
    const st = readSafetensors(file);
    if (isNdbgLayout(st.metadata)) throw new UserError(`${file} is ndbg's own checkpoint layout, not a Hugging Face file; use it as a checkpoint directly`);
    const missing = (expected ?? []).filter((n) => !st.tensors.has(n));
    if (missing.length) throw new UserError(`${index}: weight_map puts ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', …' : ''} in ${path.basename(file)}, which does not hold it`);
    for (const [k, v] of fromHfTensors(st.tensors, config)) weights.set(k, v);
  };
  if (fs.existsSync(single)) {
    add(single);
  } else if (fs.existsSync(index)) {
    for (const [shard, names] of readWeightMap(index)) {
      const file = path.join(dir, shard);
      if (!fs.existsSync(file)) throw new UserError(`${index}: shard ${shard} is missing from ${dir}`);
      add(file, names);
    }
  } else {
    throw new UserError(`${dir}: no ${HF_WEIGHTS_FILE} or ${HF_INDEX_FILE}`);
  }
  return { config, weights };
}

/** The index's weight_map grouped by shard file, in first-mention order; bad entries name the field. */
function readWeightMap(index: string): Map<string, string[]> {
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(index, 'utf8'));
  } catch (e) {
    throw new UserError(`cannot read ${index}: ${(e as Error).message}`);
  }
  const map = (raw as { weight_map?: unknown } | null)?.weight_map;
  if (!map || typeof map !== 'object' || Array.isArray(map)) throw new UserError(`${index}: weight_map must be an object of tensor name → shard file`);
  const byShard = new Map<string, string[]>();
  for (const [name, shard] of Object.entries(map as Record<string, unknown>)) {
    if (typeof shard !== 'string' || shard.includes('/') || shard.includes('\\') || shard.startsWith('.')) {
      throw new UserError(`${index}: weight_map["${name}"] must be a shard file name in the same directory, got ${JSON.stringify(shard)}`);
    }
    if (!byShard.has(shard)) byShard.set(shard, []);
    byShard.get(shard)!.push(name);
  }
  return byShard;
}

import * as fs from 'fs';
import { z } from 'zod';
import { applyOverride, parseOverride, readJsonFile, validateConfig } from '../util/config';

/**
 * The "model" section of a config file (configs/*.json). Other sections ("train", "data",
 * "optim") belong to the trainer; the model code reads only this one.
 *
 * Field names are short and Llama-flavoured; src/model/hf.ts maps them to LlamaConfig names.
 */
export const modelConfigSchema = z
  .object({
    /** Must equal the tokenizer's vocabulary size (checked by whoever pairs them). */
    vocab_size: z.number().int().positive(),
    d_model: z.number().int().positive(),
    n_layers: z.number().int().positive(),
    n_heads: z.number().int().positive(),
    /** Key/value heads for grouped-query attention; defaults to n_heads (plain multi-head). */
    n_kv_heads: z.number().int().positive().optional(),
    /** SwiGLU hidden size; defaults to ceil(8·d/3 / 64)·64. */
    d_ff: z.number().int().positive().optional(),
    /** Longest sequence the model is trained/used with (RoPE tables are built this long). */
    max_seq_len: z.number().int().positive(),
    rope_theta: z.number().positive().default(10000),
    norm_eps: z.number().positive().default(1e-5),
    /** Output head shares the token embedding matrix. */
    tie_embeddings: z.boolean().default(true),
    /** Attention confined to one document when document ids are given (block-diagonal causal mask). */
    doc_attention_mask: z.boolean().default(true),
    /** Std of the normal init; residual projections (o_proj, down_proj) get init_std / sqrt(2·n_layers). */
    init_std: z.number().positive().default(0.02),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.d_model % c.n_heads !== 0) {
      ctx.addIssue({ code: 'custom', path: ['n_heads'], message: `d_model ${c.d_model} is not divisible by n_heads ${c.n_heads}` });
    } else if ((c.d_model / c.n_heads) % 2 !== 0) {
      ctx.addIssue({ code: 'custom', path: ['n_heads'], message: `head dim ${c.d_model / c.n_heads} must be even for RoPE` });
    }
    const kv = c.n_kv_heads ?? c.n_heads;
    if (c.n_heads % kv !== 0) {
      ctx.addIssue({ code: 'custom', path: ['n_kv_heads'], message: `n_heads ${c.n_heads} is not a multiple of n_kv_heads ${kv}` });
    }
  });

export type ModelConfigInput = z.input<typeof modelConfigSchema>;

/** A validated model config with every default filled in. */
export interface ModelConfig {
  vocab_size: number;
  d_model: number;
  n_layers: number;
  n_heads: number;
  n_kv_heads: number;
  d_ff: number;
  max_seq_len: number;
  rope_theta: number;
  norm_eps: number;
  tie_embeddings: boolean;
  doc_attention_mask: boolean;
  init_std: number;
}

export function defaultFfnDim(d: number): number {
  return Math.ceil((8 * d) / 3 / 64) * 64;
}

/** Validates a raw "model" section (source names the file for error messages) and fills defaults. */
export function resolveModelConfig(raw: unknown, source = '(model config)'): ModelConfig {
  const c = validateConfig(modelConfigSchema, raw, source);
  return { ...c, n_kv_heads: c.n_kv_heads ?? c.n_heads, d_ff: c.d_ff ?? defaultFfnDim(c.d_model) };
}

/**
 * Reads the "model" section of a config file, after `--set model.x=...` overrides.
 * Overrides outside "model" are applied too (harmlessly) so the same --set list can be passed.
 */
export function loadModelConfig(file: string, overrides: string[] = []): ModelConfig {
  const raw = readJsonFile(file);
  for (const spec of overrides) {
    const { path, value } = parseOverride(spec);
    applyOverride(raw, path, value);
  }
  if (raw.model === undefined) {
    return resolveModelConfig(undefined, `${file}: missing "model" section`);
  }
  return resolveModelConfig(raw.model, overrides.length ? `${file} (model section, with --set overrides)` : `${file} (model section)`);
}

export function headDim(c: ModelConfig): number {
  return c.d_model / c.n_heads;
}

/** Per-tensor shapes in the model's own layout: linear weights are [in, out] (HF stores [out, in]). */
export function parameterShapes(c: ModelConfig): Array<[string, number[]]> {
  const hd = headDim(c);
  const out: Array<[string, number[]]> = [['model.embed_tokens.weight', [c.vocab_size, c.d_model]]];
  for (let i = 0; i < c.n_layers; i++) {
    const p = `model.layers.${i}`;
    out.push(
      [`${p}.input_layernorm.weight`, [c.d_model]],
      [`${p}.self_attn.q_proj.weight`, [c.d_model, c.n_heads * hd]],
      [`${p}.self_attn.k_proj.weight`, [c.d_model, c.n_kv_heads * hd]],
      [`${p}.self_attn.v_proj.weight`, [c.d_model, c.n_kv_heads * hd]],
      [`${p}.self_attn.o_proj.weight`, [c.n_heads * hd, c.d_model]],
      [`${p}.post_attention_layernorm.weight`, [c.d_model]],
      [`${p}.mlp.gate_proj.weight`, [c.d_model, c.d_ff]],
      [`${p}.mlp.up_proj.weight`, [c.d_model, c.d_ff]],
      [`${p}.mlp.down_proj.weight`, [c.d_ff, c.d_model]],
    );
  }
  out.push(['model.norm.weight', [c.d_model]]);
  if (!c.tie_embeddings) out.push(['lm_head.weight', [c.d_model, c.vocab_size]]);
  return out;
}

export interface ModelStats {
  /** Every stored parameter (a tied embedding counted once). */
  params: number;
  /** Parameters outside the token embedding (the usual "non-embedding" count for scaling laws). */
  nonEmbeddingParams: number;
  /** Parameters that take part in matmuls per token: all linear weights plus the output head. */
  matmulParams: number;
  /** Forward FLOPs per token at sequence length seqLen: 2·matmulParams + 4·L·d·T (attention scores and values, unmasked). */
  forwardFlopsPerToken: number;
  /** Training FLOPs per token: 6·matmulParams + 12·L·d·T (backward = 2× forward). */
  trainFlopsPerToken: number;
  seqLen: number;
}

/**
 * Parameter count and FLOPs per token. The attention term counts the full T×T score matrix
 * (PaLM's convention: causal masking is not discounted), so it matches the 6N + 12·L·d·T
 * formula used by the PyTorch reference benchmark when N = matmulParams.
 */
export function modelStats(c: ModelConfig, seqLen = c.max_seq_len): ModelStats {
  let params = 0;
  for (const [, shape] of parameterShapes(c)) params += shape.reduce((a, b) => a * b, 1);
  const embed = c.vocab_size * c.d_model;
  const norms = (2 * c.n_layers + 1) * c.d_model;
  // The embedding lookup costs no FLOPs, but the head is a V×d matmul whether tied or not.
  const matmulParams = params - norms - (c.tie_embeddings ? 0 : embed);
  const attn = c.n_layers * c.d_model * seqLen;
  return {
    params,
    nonEmbeddingParams: params - embed,
    matmulParams,
    forwardFlopsPerToken: 2 * matmulParams + 4 * attn,
    trainFlopsPerToken: 6 * matmulParams + 12 * attn,
    seqLen,
  };
}

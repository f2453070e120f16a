import { Rng } from '../util/rng';
import { disposeCache, KvCache, LlamaModel } from './model';

/**
 * Autoregressive generation with a KV cache: the prompt is run once (prefill), then one token
 * per step. Sampling happens on the host from the last position's logits (float64 math), so
 * the same seed gives the same tokens on every backend whose logits agree.
 */
export interface SampleOptions {
  /** Argmax decoding (ties → lowest id); temperature/topP are ignored. */
  greedy?: boolean;
  /** Softmax temperature (> 0); default 1. */
  temperature?: number;
  /** Nucleus sampling: keep the smallest set of most likely tokens whose mass ≥ topP; default 1. */
  topP?: number;
}

export interface GenerateOptions extends SampleOptions {
  maxNewTokens: number;
  /** Generation stops after emitting any of these (the stop token is included in the output). */
  stopTokens?: number[];
  seed?: number;
  /**
   * Constrained decoding: given the tokens generated so far, the ids the next one may be, or
   * undefined for any. Every other id's logit is -Infinity before sampling.
   */
  allowedTokens?: (generated: readonly number[]) => ReadonlySet<number> | undefined;
}

export interface GenerateResult {
  ids: number[];
  stop: 'stop_token' | 'max_new_tokens' | 'max_seq_len';
}

/** Picks the next token from logits; rng is used only when sampling. */
export function sampleToken(logits: ArrayLike<number>, opts: SampleOptions, rng: Rng): number {
  const V = logits.length;
  if (opts.greedy) {
    let best = 0;
    for (let i = 1; i < V; i++) if (logits[i] > logits[best]) best = i;
    return best;
  }
  const temperature = opts.temperature ?? 1;
  const topP = opts.topP ?? 1;
  if (!(temperature > 0)) throw new Error(`temperature must be > 0, got ${temperature}`);
  if (!(topP > 0 && topP <= 1)) throw new Error(`top-p must be in (0, 1], got ${topP}`);
  let max = -Infinity;
  for (let i = 0; i < V; i++) max = Math.max(max, logits[i]);
  const probs = new Float64Array(V);
  let z = 0;
  for (let i = 0; i < V; i++) z += probs[i] = Math.exp((logits[i] - max) / temperature);
  // Sort by probability (stable on id for ties) and keep the nucleus.
  const order = Array.from({ length: V }, (_, i) => i).sort((a, b) => probs[b] - probs[a] || a - b);
  const kept: number[] = [];
  let mass = 0;
  for (const i of order) {
    kept.push(i);
    mass += probs[i] / z;
    if (mass >= topP) break;
  }
  let r = rng.next() * kept.reduce((s, i) => s + probs[i], 0);
  for (const i of kept) {
    r -= probs[i];
    if (r < 0) return i;
  }
  return kept[kept.length - 1];
}

/** The logits with every id outside `allowed` at -Infinity (unchanged when allowed is undefined or empty). */
export function restrictLogits(logits: ArrayLike<number>, allowed: ReadonlySet<number> | undefined): ArrayLike<number> {
  if (!allowed || allowed.size === 0) return logits;
  const out = new Float32Array(logits.length).fill(-Infinity);
  for (const id of allowed) if (id >= 0 && id < logits.length) out[id] = logits[id];
  return out;
}

export function generate(model: LlamaModel, promptIds: number[], opts: GenerateOptions): GenerateResult {
  if (promptIds.length === 0) throw new Error('generate: the prompt has no tokens');
  const rng = Rng.from(opts.seed ?? 0, 'generate');
  const stops = new Set(opts.stopTokens ?? []);
  const out: number[] = [];
  let cache: KvCache | undefined;
  let next: Int32Array = Int32Array.from(promptIds);
  try {
    for (;;) {
      if (out.length >= opts.maxNewTokens) return { ids: out, stop: 'max_new_tokens' };
      if ((cache?.length ?? 0) + next.length > model.config.max_seq_len) return { ids: out, stop: 'max_seq_len' };
      const r = model.decode([next], cache);
      disposeCache(cache);
      cache = r.cache;
      const logits = restrictLogits(r.logits.dataSync(), opts.allowedTokens?.(out));
      r.logits.dispose();
      const token = sampleToken(logits, opts, rng);
      out.push(token);
      if (stops.has(token)) return { ids: out, stop: 'stop_token' };
      next = Int32Array.of(token);
    }
  } finally {
    disposeCache(cache);
  }
}

/**
 * Many prompts decoded as one batch: what `generate` does for one prompt, for B prompts at a
 * time. On a CPU a single prompt's decoding step is bound by per-op latency, not arithmetic, so
 * B rows cost little more than one (docs/eval.md, "Batched decoding").
 *
 * Prompts of different lengths are left-padded to the longest; padding is masked out of every
 * attention row (LlamaModel.decode's padLeft), and RoPE scores depend only on relative
 * positions, so each row computes what it would alone up to float rounding. A row leaves the
 * batch when it emits a stop token or reaches its token limit, and its cache rows are dropped.
 * Each row keeps its own sampling stream (Rng.from(seed, 'generate'), as `generate`), so a
 * sampled row draws the same tokens whichever batch it is in, given the same logits.
 */
import { Rng } from '../util/rng';
import { generate, restrictLogits, sampleToken, type GenerateOptions, type GenerateResult, type SampleOptions } from './generate';
import { disposeCache, gatherCache, type KvCache, type LlamaModel } from './model';

export interface BatchPrompt {
  ids: number[];
  maxNewTokens: number;
  /** As GenerateOptions.allowedTokens, for this row. */
  allowedTokens?: GenerateOptions['allowedTokens'];
  seed?: number;
}

export interface BatchOptions extends SampleOptions {
  stopTokens?: number[];
}

interface Row {
  index: number;
  prompt: BatchPrompt;
  /** Most tokens this row writes in the batch: its own limits, or less where the batch's longest prompt leaves less context. */
  limit: number;
  out: number[];
  rng: Rng;
}

/**
 * Tokens `generate` writes for a prompt of `length` at most: maxNewTokens, or until the last
 * written token would sit at position max_seq_len (its logits come from the position before).
 */
/** A prompt's first batch row: `pad` padding ids (0; LlamaModel.decode's padLeft masks them), then the prompt. */
export function leftPadded(ids: readonly number[], pad: number): Int32Array {
  const row = new Int32Array(pad + ids.length);
  row.set(ids, pad);
  return row;
}

export function tokenLimit(maxNewTokens: number, length: number, maxSeqLen: number): number {
  return Math.min(maxNewTokens, maxSeqLen - length + 1);
}

/**
 * Decodes `prompts` (all at once: callers choose the batch and group prompts of similar length
 * so that little is padding). In the batch every row's output starts after the longest prompt,
 * so a short row has less context left than alone; the rare row that runs into that limit
 * without finishing is decoded again alone with `generate`, so every row stops where it would
 * alone.
 */
export function generateBatch(model: LlamaModel, prompts: BatchPrompt[], opts: BatchOptions): GenerateResult[] {
  const results: GenerateResult[] = new Array(prompts.length);
  if (prompts.length === 0) return results;
  for (const [i, p] of prompts.entries()) if (p.ids.length === 0) throw new Error(`generateBatch: prompt ${i} has no tokens`);
  const maxLen = model.config.max_seq_len;
  const width = Math.max(...prompts.map((p) => p.ids.length));
  const rows: Row[] = prompts.map((prompt, index) => ({
    index,
    prompt,
    limit: Math.min(tokenLimit(prompt.maxNewTokens, prompt.ids.length, maxLen), tokenLimit(Infinity, width, maxLen)),
    out: [],
    rng: Rng.from(prompt.seed ?? 0, 'generate'),
  }));
  decodeRows(model, rows, width, opts, results);
  for (const row of rows) {
    const cut = results[row.index].stop !== 'stop_token' && row.limit < tokenLimit(row.prompt.maxNewTokens, row.prompt.ids.length, maxLen);
    if (cut) results[row.index] = generate(model, row.prompt.ids, { ...opts, maxNewTokens: row.prompt.maxNewTokens, allowedTokens: row.prompt.allowedTokens, seed: row.prompt.seed });
  }
  return results;
}

function decodeRows(model: LlamaModel, rows: Row[], width: number, opts: BatchOptions, results: GenerateResult[]): void {
  const stops = new Set(opts.stopTokens ?? []);
  let alive = rows;
  let pads = rows.map((r) => width - r.prompt.ids.length);
  let next: Int32Array[] = rows.map((r, b) => leftPadded(r.prompt.ids, pads[b]));
  let cache: KvCache | undefined;
  /** Keeps the rows `done` does not claim (it records their results), with their cache rows. */
  const retain = (done: (row: Row, b: number) => GenerateResult | undefined) => {
    const keep: number[] = [];
    alive.forEach((row, b) => {
      const result = done(row, b);
      if (result) results[row.index] = result;
      else keep.push(b);
    });
    if (keep.length === alive.length) return;
    if (cache && keep.length > 0) {
      const gathered = gatherCache(cache, keep);
      disposeCache(cache);
      cache = gathered;
    }
    [alive, pads, next] = [keep.map((b) => alive[b]), keep.map((b) => pads[b]), keep.map((b) => next[b])];
  };
  try {
    for (;;) {
      retain((row) => (row.out.length < row.limit ? undefined : { ids: row.out, stop: row.out.length >= row.prompt.maxNewTokens ? 'max_new_tokens' : 'max_seq_len' }));
      if (alive.length === 0) return;
      const r = model.decode(next, cache, pads);
      disposeCache(cache);
      cache = r.cache;
      const logits = r.logits.dataSync() as Float32Array;
      const V = r.logits.shape[1];
      r.logits.dispose();
      next = alive.map((row, b) => {
        const token = sampleToken(restrictLogits(logits.subarray(b * V, (b + 1) * V), row.prompt.allowedTokens?.(row.out)), opts, row.rng);
        row.out.push(token);
        return Int32Array.of(token);
      });
      retain((row) => (stops.has(row.out[row.out.length - 1]) ? { ids: row.out, stop: 'stop_token' } : undefined));
      if (alive.length === 0) return;
    }
  } finally {
    disposeCache(cache);
  }
}

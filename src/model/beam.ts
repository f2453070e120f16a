/**
 * Beam search: the most likely continuation under the model, not the one greedy decoding
 * reaches token by token. A frame is short and structured, so one early token can decide its
 * type: for `count("berry", "r")` a greedy decoder wrote `"t": "` (p 0.54) and then `True`,
 * while `"t": "'` (p 0.28) then `r` (p 0.996) and `'"}` (p 0.94) is the likelier frame
 * (docs/eval.md, "Decoding").
 *
 * All live beams run as one batch through the KV cache; after each step the cache rows are
 * gathered by the beams' parents. Scores are sums of log-probabilities, renormalized over the
 * ids `allowedTokens` leaves (the constraint says the rest cannot be). A beam that emits a stop
 * token is finished; the search ends when the best finished beam scores at least as high as
 * the best live one (log-probabilities only fall, so no live beam can overtake it), or at the
 * token and context limits.
 *
 * `beamSearchBatch` searches for many prompts at once: every live beam of every prompt is one
 * row of the batch (prompts left-padded to the longest, as generate_batch.ts does), so a CPU
 * pays the per-op latency of a step once for all of them. Each prompt's search is the one it
 * runs alone; one that the batch's longest prompt leaves too little context is searched again
 * alone.
 */
import type { GenerateOptions, GenerateResult } from './generate';
import { leftPadded, tokenLimit, type BatchPrompt } from './generate_batch';
import { disposeCache, gatherCache, type KvCache, type LlamaModel } from './model';

export interface BeamOptions extends Pick<GenerateOptions, 'maxNewTokens' | 'stopTokens' | 'allowedTokens'>, Pick<BatchBeamOptions, 'greedyWhile'> {
  /** Beams kept at each step (1 is greedy decoding). */
  beams: number;
}

interface Beam {
  ids: number[];
  score: number;
}

/** Log-softmax of one row in float64, over `allowed` when given. */
function logProbs(row: Float32Array, allowed: ReadonlySet<number> | undefined): Float64Array {
  const out = new Float64Array(row.length).fill(-Infinity);
  const ids = allowed && allowed.size > 0 ? [...allowed].filter((id) => id >= 0 && id < row.length) : undefined;
  let max = -Infinity;
  for (const id of ids ?? row.keys()) max = Math.max(max, row[id]);
  let z = 0;
  for (const id of ids ?? row.keys()) z += Math.exp(row[id] - max);
  const log = max + Math.log(z);
  for (const id of ids ?? row.keys()) out[id] = row[id] - log;
  return out;
}

/** The `k` best ids of a row, best first (ties: lower id first). */
function topK(lp: Float64Array, k: number): number[] {
  const best: number[] = [];
  for (let id = 0; id < lp.length; id++) {
    if (lp[id] === -Infinity) continue;
    let at = best.length;
    while (at > 0 && lp[best[at - 1]] < lp[id]) at--;
    if (at < k) {
      best.splice(at, 0, id);
      if (best.length > k) best.pop();
    }
  }
  return best;
}

/** A beam search's stop tokens and width, for all the prompts of a batch. */
export interface BatchBeamOptions {
  beams: number;
  stopTokens?: number[];
  /** While this holds for what a search has written, its next token is chosen greedily (one beam). */
  greedyWhile?: (generated: readonly number[]) => boolean;
}

/** One prompt's search inside a batch. */
interface Search {
  index: number;
  prompt: BatchPrompt;
  /** Padding before the prompt in its batch rows. */
  pad: number;
  /** Most tokens it may write alone, and in this batch (less where the longest prompt leaves less context). */
  own: number;
  limit: number;
  alive: Beam[];
  finished: Beam[];
}

const best = (beams: Beam[]) => beams.reduce<Beam | undefined>((a, b) => (a === undefined || b.score > a.score ? b : a), undefined);

export function beamSearch(model: LlamaModel, promptIds: number[], opts: BeamOptions): GenerateResult {
  if (promptIds.length === 0) throw new Error('beamSearch: the prompt has no tokens');
  return beamSearchBatch(model, [{ ids: promptIds, maxNewTokens: opts.maxNewTokens, allowedTokens: opts.allowedTokens }], opts)[0];
}

export function beamSearchBatch(model: LlamaModel, prompts: BatchPrompt[], opts: BatchBeamOptions): GenerateResult[] {
  if (!(Number.isInteger(opts.beams) && opts.beams >= 1)) throw new Error(`beams must be a positive integer, got ${opts.beams}`);
  const results: GenerateResult[] = new Array(prompts.length);
  if (prompts.length === 0) return results;
  for (const [i, p] of prompts.entries()) if (p.ids.length === 0) throw new Error(`beamSearch: prompt ${i} has no tokens`);
  const maxLen = model.config.max_seq_len;
  const width = Math.max(...prompts.map((p) => p.ids.length));
  const searches: Search[] = prompts.map((prompt, index) => {
    const own = tokenLimit(prompt.maxNewTokens, prompt.ids.length, maxLen);
    const limit = Math.min(own, tokenLimit(Infinity, width, maxLen));
    return { index, prompt, pad: width - prompt.ids.length, own, limit, alive: [{ ids: [], score: 0 }], finished: [] };
  });
  const cut: Search[] = [];
  runSearches(model, searches, opts, results, cut);
  for (const s of cut) results[s.index] = beamSearchBatch(model, [s.prompt], opts)[0];
  return results;
}

/**
 * A search's result once it is over (checked before each step): the best finished beam when no
 * live one can overtake it, else the best live beam at the token or context limit; 'cut' where
 * only the batch's context limit stopped it; undefined while it goes on.
 */
function verdict(s: Search): GenerateResult | 'cut' | undefined {
  const done = best(s.finished);
  const top = s.alive[0];
  if (done && done.score >= top.score) return { ids: done.ids, stop: 'stop_token' };
  if (top.ids.length >= s.prompt.maxNewTokens) return { ids: top.ids, stop: 'max_new_tokens' };
  if (top.ids.length < s.limit) return undefined;
  if (s.limit < s.own) return 'cut';
  return done ? { ids: done.ids, stop: 'stop_token' } : { ids: top.ids, stop: 'max_seq_len' };
}

function runSearches(model: LlamaModel, searches: Search[], opts: BatchBeamOptions, results: GenerateResult[], cut: Search[]): void {
  const stops = new Set(opts.stopTokens ?? []);
  /** Records a search's result if it is over; true then. */
  const settle = (s: Search): boolean => {
    const v = verdict(s);
    if (v === 'cut') cut.push(s);
    else if (v) results[s.index] = v;
    return v !== undefined;
  };
  let active = searches.filter((s) => !settle(s));
  let next: Int32Array[] = active.map((s) => leftPadded(s.prompt.ids, s.pad));
  let pads = active.map((s) => s.pad);
  let cache: KvCache | undefined;
  try {
    while (active.length > 0) {
      const r = model.decode(next, cache, pads);
      disposeCache(cache);
      cache = r.cache;
      const logits = r.logits.dataSync() as Float32Array;
      const V = r.logits.shape[1];
      r.logits.dispose();
      const [parents, going, tokens, rowPads]: [number[], Search[], Int32Array[], number[]] = [[], [], [], []];
      let row = 0;
      for (const s of active) {
        const candidates: Array<Beam & { parent: number }> = [];
        const beams = opts.greedyWhile?.(s.alive[0].ids) ? 1 : opts.beams;
        for (const beam of s.alive) {
          const lp = logProbs(logits.subarray(row * V, (row + 1) * V), s.prompt.allowedTokens?.(beam.ids));
          for (const id of topK(lp, beams)) candidates.push({ ids: [...beam.ids, id], score: beam.score + lp[id], parent: row });
          row++;
        }
        // Stable: equal scores keep beam order, then id order.
        candidates.sort((a, b) => b.score - a.score);
        const kept: Array<Beam & { parent: number }> = [];
        for (const c of candidates) {
          if (stops.has(c.ids[c.ids.length - 1])) s.finished.push(c);
          else if (kept.length < beams) kept.push(c);
        }
        if (kept.length === 0) {
          results[s.index] = { ids: (best(s.finished) as Beam).ids, stop: 'stop_token' };
          continue;
        }
        s.alive = kept;
        if (settle(s)) continue;
        going.push(s);
        for (const c of kept) {
          parents.push(c.parent);
          tokens.push(Int32Array.of(c.ids[c.ids.length - 1]));
          rowPads.push(s.pad);
        }
      }
      if (going.length === 0) return;
      if (parents.length !== row || parents.some((p, i) => p !== i)) {
        const gathered = gatherCache(cache, parents);
        disposeCache(cache);
        cache = gathered;
      }
      [active, next, pads] = [going, tokens, rowPads];
    }
  } finally {
    disposeCache(cache);
  }
}

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
 */
import type { GenerateOptions, GenerateResult } from './generate';
import { disposeCache, gatherCache, type KvCache, type LlamaModel } from './model';

export interface BeamOptions extends Pick<GenerateOptions, 'maxNewTokens' | 'stopTokens' | 'allowedTokens'> {
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

export function beamSearch(model: LlamaModel, promptIds: number[], opts: BeamOptions): GenerateResult {
  if (promptIds.length === 0) throw new Error('beamSearch: the prompt has no tokens');
  if (!(Number.isInteger(opts.beams) && opts.beams >= 1)) throw new Error(`beams must be a positive integer, got ${opts.beams}`);
  const stops = new Set(opts.stopTokens ?? []);
  const finished: Beam[] = [];
  let alive: Beam[] = [{ ids: [], score: 0 }];
  let cache: KvCache | undefined;
  let next: Int32Array[] = [Int32Array.from(promptIds)];
  const best = (beams: Beam[]) => beams.reduce<Beam | undefined>((a, b) => (a === undefined || b.score > a.score ? b : a), undefined);
  try {
    for (;;) {
      const done = best(finished);
      if (done && done.score >= alive[0].score) return { ids: done.ids, stop: 'stop_token' };
      if (alive[0].ids.length >= opts.maxNewTokens) return { ids: alive[0].ids, stop: 'max_new_tokens' };
      if ((cache?.length ?? 0) + next[0].length > model.config.max_seq_len) return done ? { ids: done.ids, stop: 'stop_token' } : { ids: alive[0].ids, stop: 'max_seq_len' };
      const r = model.decode(next, cache);
      disposeCache(cache);
      cache = r.cache;
      const rows = r.logits.dataSync() as Float32Array;
      const V = r.logits.shape[1];
      r.logits.dispose();
      const candidates: Array<Beam & { parent: number }> = [];
      alive.forEach((beam, b) => {
        const lp = logProbs(rows.subarray(b * V, (b + 1) * V), opts.allowedTokens?.(beam.ids));
        for (const id of topK(lp, opts.beams)) candidates.push({ ids: [...beam.ids, id], score: beam.score + lp[id], parent: b });
      });
      // Stable: equal scores keep beam order, then id order.
      candidates.sort((a, b) => b.score - a.score);
      const kept: Array<Beam & { parent: number }> = [];
      for (const c of candidates) {
        if (stops.has(c.ids[c.ids.length - 1])) finished.push(c);
        else if (kept.length < opts.beams) kept.push(c);
      }
      if (kept.length === 0) return { ids: (best(finished) as Beam).ids, stop: 'stop_token' };
      const parents = kept.map((c) => c.parent);
      if (parents.some((p, i) => p !== i) || parents.length !== alive.length) {
        const gathered = gatherCache(cache, parents);
        disposeCache(cache);
        cache = gathered;
      }
      alive = kept;
      next = kept.map((c) => Int32Array.of(c.ids[c.ids.length - 1]));
    }
  } finally {
    disposeCache(cache);
  }
}

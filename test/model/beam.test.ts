import { initBackend } from '../../src/backend/backend';
import { beamSearch, beamSearchBatch } from '../../src/model/beam';
import type { BatchPrompt } from '../../src/model/generate_batch';
import { generate } from '../../src/model/generate';
import type { LlamaModel } from '../../src/model/model';
import { testConfig, testModel } from './helpers';

/** Log-probability of `ids` after `prompt`, from full forwards (no cache), over `allowed` ids when given. */
function logProb(m: LlamaModel, prompt: number[], ids: number[], allowed?: (generated: number[]) => Set<number> | undefined): number {
  const all = m.logits([Int32Array.from([...prompt, ...ids])]).arraySync()[0];
  let lp = 0;
  ids.forEach((id, k) => {
    const row = all[prompt.length + k - 1];
    const keep = allowed?.(ids.slice(0, k));
    const z = row.reduce((s, x, i) => (keep && !keep.has(i) ? s : s + Math.exp(x)), 0);
    lp += row[id] - Math.log(z);
  });
  return lp;
}

describe('beam search', () => {
  beforeAll(async () => {
    await initBackend('wasm', () => undefined);
  });

  test('one beam is greedy decoding', () => {
    const m = testModel(testConfig({ max_seq_len: 16 }), 5);
    for (const stopTokens of [[], [7, 11, 20]]) {
      const greedy = generate(m, [3, 1, 4], { maxNewTokens: 8, greedy: true, stopTokens });
      expect(beamSearch(m, [3, 1, 4], { beams: 1, maxNewTokens: 8, stopTokens })).toEqual(greedy);
    }
    m.dispose();
  });

  test('with as many beams as ids it finds the most likely continuation of two tokens', () => {
    const c = testConfig({ max_seq_len: 16 });
    const m = testModel(c, 9);
    const prompt = [2, 7, 1, 8];
    const stops = [5, 6, 30];
    const r = beamSearch(m, prompt, { beams: c.vocab_size, maxNewTokens: 2, stopTokens: stops });
    // Every continuation of at most two tokens that ends at a stop token, or runs to the limit.
    let best = { ids: [] as number[], lp: -Infinity };
    for (let a = 0; a < c.vocab_size; a++) {
      const first = stops.includes(a) ? [[a]] : Array.from({ length: c.vocab_size }, (_, b) => [a, b]);
      for (const ids of first) {
        const lp = logProb(m, prompt, ids);
        if (lp > best.lp) best = { ids, lp };
      }
    }
    expect(r.ids).toEqual(best.ids);
    m.dispose();
  });

  test('more beams never find a less likely finished frame than greedy, and the constraint holds', () => {
    const c = testConfig({ max_seq_len: 24 });
    const m = testModel(c, 3);
    const stops = [4, 9];
    // Only even ids (and the stops) after an even id: a constraint that depends on what was written.
    const allowed = (generated: readonly number[]) => {
      const last = generated[generated.length - 1];
      return last !== undefined && last % 2 === 0 ? new Set([...Array.from({ length: 18 }, (_, i) => 2 * i), ...stops]) : undefined;
    };
    let better = 0;
    for (const prompt of [[1, 2, 3], [5, 8, 13, 21], [34, 1], [0, 0, 7], [11, 12]]) {
      const opts = { maxNewTokens: 10, stopTokens: stops, allowedTokens: allowed };
      const greedy = generate(m, prompt, { ...opts, greedy: true });
      const beam = beamSearch(m, prompt, { ...opts, beams: 6 });
      beam.ids.forEach((id, k) => {
        const keep = allowed(beam.ids.slice(0, k));
        if (keep) expect(keep.has(id)).toBe(true);
      });
      if (greedy.stop !== 'stop_token' || beam.stop !== 'stop_token') continue;
      const [g, b] = [logProb(m, prompt, greedy.ids, allowed), logProb(m, prompt, beam.ids, allowed)];
      expect(b).toBeGreaterThanOrEqual(g - 1e-4);
      if (b > g + 1e-4) better++;
    }
    expect(better).toBeGreaterThan(0);
    m.dispose();
  });
  test('greedyWhile: the tokens written while it holds are greedy, the rest is searched', () => {
    const c = testConfig({ max_seq_len: 24 });
    const m = testModel(c, 3);
    const stops = [4, 9];
    const twoGreedy = (g: readonly number[]) => g.length < 2;
    let differs = 0;
    for (const prompt of [[1, 2, 3], [5, 8, 13, 21], [34, 1], [0, 0, 7], [11, 12], [6, 6], [2, 30, 17]]) {
      const greedy = generate(m, prompt, { maxNewTokens: 10, greedy: true, stopTokens: stops });
      const free = beamSearch(m, prompt, { beams: 6, maxNewTokens: 10, stopTokens: stops });
      const held = beamSearch(m, prompt, { beams: 6, maxNewTokens: 10, stopTokens: stops, greedyWhile: twoGreedy });
      const head = Math.min(2, greedy.ids.length);
      expect(held.ids.slice(0, head)).toEqual(greedy.ids.slice(0, head));
      if (free.ids.slice(0, head).join() !== greedy.ids.slice(0, head).join()) differs++;
      // Past the greedy head it is a beam search: never less likely than greedy's own continuation.
      if (held.stop === 'stop_token' && greedy.stop === 'stop_token') expect(logProb(m, prompt, held.ids)).toBeGreaterThanOrEqual(logProb(m, prompt, greedy.ids) - 1e-4);
    }
    // Without greedyWhile the search does change the head somewhere: the check above is not vacuous.
    expect(differs).toBeGreaterThan(0);
    m.dispose();
  });

  test('a batch of prompts finds what each prompt finds alone: limits, constraints, and a row the batch cuts short', () => {
    const m = testModel(testConfig({ max_seq_len: 24 }), 7);
    const stops = [4, 9];
    const evenAfterEven = (generated: readonly number[]) => {
      const last = generated[generated.length - 1];
      return last !== undefined && last % 2 === 0 ? new Set([...Array.from({ length: 18 }, (_, i) => 2 * i), ...stops]) : undefined;
    };
    const prompts: BatchPrompt[] = [
      { ids: [1, 2, 3], maxNewTokens: 10 },
      { ids: [5, 8, 13, 21, 3, 3], maxNewTokens: 3 },
      { ids: [34, 1], maxNewTokens: 10, allowedTokens: evenAfterEven },
      // Width 18 leaves this short prompt 7 tokens in the batch; alone it may write 12.
      { ids: [11, 12], maxNewTokens: 12, allowedTokens: () => new Set([1, 3, 5, 7, 11]) },
      { ids: Array.from({ length: 18 }, (_, i) => (i * 5) % 16), maxNewTokens: 12 },
    ];
    for (const beams of [1, 3, 5]) {
      const greedyWhile = beams === 5 ? (g: readonly number[]) => g.length < 1 : undefined;
      const batch = beamSearchBatch(m, prompts, { beams, stopTokens: stops, greedyWhile });
      const alone = prompts.map((p) => beamSearch(m, p.ids, { beams, maxNewTokens: p.maxNewTokens, allowedTokens: p.allowedTokens, stopTokens: stops, greedyWhile }));
      expect(batch).toEqual(alone);
      expect(new Set(alone.map((r) => r.stop)).size).toBeGreaterThan(1);
      // The cut row (no stop token allowed) did need more than the batch left it.
      expect(alone[3]).toMatchObject({ stop: 'max_new_tokens', ids: expect.objectContaining({ length: 12 }) });
    }
    expect(beamSearchBatch(m, [], { beams: 2 })).toEqual([]);
    expect(() => beamSearchBatch(m, [{ ids: [], maxNewTokens: 2 }], { beams: 2 })).toThrow(/prompt 0 has no tokens/);
    m.dispose();
  });
});

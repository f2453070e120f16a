import { initBackend } from '../../src/backend/backend';
import { generate, restrictLogits, sampleToken } from '../../src/model/generate';
import { Rng } from '../../src/util/rng';
import { testConfig, testModel } from './helpers';

describe('generation', () => {
  beforeAll(async () => {
    await initBackend('wasm', () => undefined);
  });

  test('greedy decoding with the KV cache equals argmax of full forwards, token by token', () => {
    const c = testConfig({ max_seq_len: 16 });
    const m = testModel(c, 5);
    const prompt = [3, 1, 4, 1, 5];
    const r = generate(m, prompt, { maxNewTokens: 8, greedy: true });
    expect(r.stop).toBe('max_new_tokens');
    const seq = [...prompt];
    for (let i = 0; i < 8; i++) {
      const logits = m.logits([Int32Array.from(seq)]).arraySync()[0][seq.length - 1];
      seq.push(logits.indexOf(Math.max(...logits)));
    }
    expect(r.ids).toEqual(seq.slice(prompt.length));
    // The context window bounds generation.
    expect(generate(m, prompt, { maxNewTokens: 100, greedy: true })).toMatchObject({ stop: 'max_seq_len' });
    expect(generate(m, prompt, { maxNewTokens: 100, greedy: true }).ids).toHaveLength(16 - prompt.length + 1);
    m.dispose();
  });

  test('sampling is seeded, stops at stop tokens, and tiny top-p is greedy', () => {
    const c = testConfig();
    const m = testModel(c, 8);
    const opts = { maxNewTokens: 6, temperature: 1.5, topP: 0.9 };
    const a = generate(m, [1, 2], { ...opts, seed: 1 });
    expect(generate(m, [1, 2], { ...opts, seed: 1 }).ids).toEqual(a.ids);
    const seeds = [2, 3, 4, 5].map((seed) => generate(m, [1, 2], { ...opts, seed }).ids.join());
    expect(new Set([a.ids.join(), ...seeds]).size).toBeGreaterThan(1);
    const greedy = generate(m, [1, 2], { maxNewTokens: 6, greedy: true }).ids;
    expect(generate(m, [1, 2], { maxNewTokens: 6, topP: 1e-9, seed: 3 }).ids).toEqual(greedy);
    const stop = generate(m, [1, 2], { maxNewTokens: 6, greedy: true, stopTokens: [greedy[2]] });
    expect(stop.stop).toBe('stop_token');
    expect(stop.ids).toEqual(greedy.slice(0, greedy.indexOf(greedy[2]) + 1));
    m.dispose();
  });

  test('sampleToken follows the softmax, temperature and the nucleus', () => {
    const rng = Rng.from(1, 't');
    const logits = [0, Math.log(3), -50];
    const count = (opts: object) => {
      const n = [0, 0, 0];
      for (let i = 0; i < 4000; i++) n[sampleToken(logits, opts, rng)]++;
      return n;
    };
    const plain = count({});
    expect(plain[1] / 4000).toBeGreaterThan(0.72);
    expect(plain[1] / 4000).toBeLessThan(0.78);
    expect(plain[2]).toBe(0);
    // T = 100 flattens [0, 1.1, -50] to probabilities ≈ [0.382, 0.386, 0.232].
    const hot = count({ temperature: 100 });
    expect(hot[2] / 4000).toBeGreaterThan(0.2);
    expect(hot[2] / 4000).toBeLessThan(0.26);
    expect(count({ topP: 0.7 })).toEqual([0, 4000, 0]); // token 1 alone has 0.75 ≥ 0.7
    expect(sampleToken([1, 5, 5], { greedy: true }, rng)).toBe(1);
    expect(() => sampleToken(logits, { temperature: 0 }, rng)).toThrow(/temperature/);
  });
  test('constrained decoding: every token is one the constraint allows, and it sees what was generated so far', () => {
    const c = testConfig();
    const m = testModel(c, 8);
    const free = generate(m, [1, 2], { maxNewTokens: 6, greedy: true }).ids;
    // Even positions may only be 7 or 9; odd ones only what free greedy decoding did not pick there.
    const seen: number[][] = [];
    const allowed = (g: readonly number[]) => {
      seen.push([...g]);
      return g.length % 2 === 0 ? new Set([7, 9]) : new Set(Array.from({ length: c.vocab_size }, (_, i) => i).filter((i) => i !== free[g.length]));
    };
    const r = generate(m, [1, 2], { maxNewTokens: 6, greedy: true, allowedTokens: allowed });
    r.ids.forEach((id, i) => (i % 2 === 0 ? expect([7, 9]).toContain(id) : expect(id).not.toBe(free[i])));
    expect(seen).toEqual(r.ids.map((_, i) => r.ids.slice(0, i)));
    // Undefined or empty allows everything: the same tokens as unconstrained decoding.
    expect(generate(m, [1, 2], { maxNewTokens: 6, greedy: true, allowedTokens: () => undefined }).ids).toEqual(free);
    expect(Array.from(restrictLogits([1, 2, 3], new Set()))).toEqual([1, 2, 3]);
    expect(Array.from(restrictLogits([1, 2, 3], new Set([0, 2])))).toEqual([1, -Infinity, 3]);
    m.dispose();
  });
});

import { initBackend } from '../../src/backend/backend';
import { generate } from '../../src/model/generate';
import { generateBatch, type BatchPrompt } from '../../src/model/generate_batch';
import { testConfig, testModel } from './helpers';

describe('batched generation', () => {
  beforeAll(async () => {
    await initBackend('wasm', () => undefined);
  });

  test('a left-padded row gives the logits it gives alone', () => {
    const m = testModel(testConfig({ max_seq_len: 32 }), 3);
    const long = Int32Array.from([5, 9, 2, 7, 1, 8, 3]);
    const short = Int32Array.from([4, 6, 2]);
    const padded = new Int32Array(long.length);
    padded.set(short, long.length - short.length);
    const both = m.decode([long, padded], undefined, [0, long.length - short.length]);
    const alone = m.decode([short]);
    const rows = both.logits.arraySync();
    const want = alone.logits.arraySync()[0];
    rows[1].forEach((x, i) => expect(Math.abs(x - want[i])).toBeLessThan(1e-4));
    // Without the padding mask the row would see the padding: the check above is not vacuous.
    const unmasked = m.decode([long, padded]).logits.arraySync()[1];
    expect(Math.max(...unmasked.map((x, i) => Math.abs(x - want[i])))).toBeGreaterThan(1e-3);
    m.dispose();
  });

  test('every row decodes what it decodes alone: tokens, stop reasons, constraints and seeds', () => {
    const m = testModel(testConfig({ max_seq_len: 24 }), 11);
    const evenOnly = new Set([0, 2, 4, 6, 8, 10, 12, 14]);
    const prompts: BatchPrompt[] = [
      { ids: [1, 2, 3], maxNewTokens: 6 },
      { ids: [7, 3, 9, 4, 1, 1, 5, 2], maxNewTokens: 4 },
      { ids: [2], maxNewTokens: 9, allowedTokens: () => evenOnly },
      // Long: its context limit (24 − 20 + 1 tokens) ends it before maxNewTokens.
      { ids: Array.from({ length: 20 }, (_, i) => (i * 7) % 16), maxNewTokens: 12 },
    ];
    for (const opts of [{ greedy: true }, { temperature: 1.3, topP: 0.9 }]) {
      const stopTokens = [5];
      const batch = generateBatch(m, prompts.map((p, i) => ({ ...p, seed: i })), { ...opts, stopTokens });
      const alone = prompts.map((p, i) => generate(m, p.ids, { ...opts, stopTokens, maxNewTokens: p.maxNewTokens, allowedTokens: p.allowedTokens, seed: i }));
      expect(batch).toEqual(alone);
      expect(batch[3]).toMatchObject({ stop: expect.stringMatching(/max_seq_len|stop_token/) });
      expect(batch[2].ids.filter((t) => t !== 5).every((t) => evenOnly.has(t))).toBe(true);
    }
    m.dispose();
  });

  test('a short row that the longest prompt leaves too little context is decoded again alone', () => {
    // Width 20 leaves 5 tokens in the batch; the short row may write 10 alone.
    const m = testModel(testConfig({ max_seq_len: 24 }), 4);
    const prompts: BatchPrompt[] = [
      { ids: [3, 1], maxNewTokens: 10 },
      { ids: Array.from({ length: 20 }, (_, i) => (i * 5) % 16), maxNewTokens: 10 },
    ];
    const batch = generateBatch(m, prompts, { greedy: true });
    expect(batch[0]).toEqual(generate(m, prompts[0].ids, { greedy: true, maxNewTokens: 10 }));
    expect(batch[0].ids).toHaveLength(10);
    expect(batch[1]).toEqual(generate(m, prompts[1].ids, { greedy: true, maxNewTokens: 10 }));
    m.dispose();
  });
});

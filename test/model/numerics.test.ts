import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/backend/backend';
import { disposeCache, KvCache } from '../../src/model/model';
import type { TokenBatch } from '../../src/data/batch';
import { Rng } from '../../src/util/rng';
import { referenceLogits, referenceLoss } from './reference';
import { randomIds, testConfig, testModel } from './helpers';
import { backendsUnderTest } from '../backend/native';

/**
 * Numerics on cpu, wasm and (when built here) tensorflow: logits against the float64
 * reference, gradients against finite differences of the float64 reference loss, KV-cache
 * decoding against the full forward, and no tensor leak over 200 training steps.
 */
/** A TokenBatch from rows of T+1 ids, target-aligned 0/1 weights [B, T] and document ids [B, T+1]. */
function tokenBatch(rows: Int32Array[], weights?: Float32Array[], docs?: Int32Array[]): TokenBatch {
  const w = rows[0].length;
  const ids = new Int32Array(rows.length * w);
  const lossMask = new Uint8Array(rows.length * w);
  const docIds = docs && new Int32Array(rows.length * w);
  rows.forEach((r, b) => {
    ids.set(r, b * w);
    for (let t = 1; t < w; t++) lossMask[b * w + t] = weights ? weights[b][t - 1] : 1;
    docIds?.set(docs![b], b * w);
  });
  return { batchSize: rows.length, seqLen: w - 1, ids, lossMask, docIds };
}

describe.each(backendsUnderTest())('model numerics on %s', (backend) => {
  beforeAll(async () => {
    await initBackend(backend, () => undefined);
  });

  test.each([
    ['untied, GQA', { tie_embeddings: false }],
    ['tied, MHA', { tie_embeddings: true, n_kv_heads: 4 }],
  ])('logits match the float64 reference (%s)', (_name, over) => {
    const c = testConfig(over);
    const m = testModel(c, 3);
    const rng = Rng.from(5, 'ids');
    const ids = randomIds(rng, 2, 12, c.vocab_size);
    const docs = [Int32Array.from([0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2]), Int32Array.from([7, 7, 7, 7, 7, 7, 7, 7, 7, 9, 9, 9])];
    const w = m.getWeights();
    for (const withDocs of [false, true]) {
      const out = m.logits(ids, withDocs ? docs : undefined);
      const got = out.arraySync();
      out.dispose();
      let maxDiff = 0;
      let maxAbs = 0;
      for (let b = 0; b < 2; b++) {
        const ref = referenceLogits(c, w, ids[b], withDocs ? docs[b] : undefined);
        for (let t = 0; t < 12; t++)
          for (let v = 0; v < c.vocab_size; v++) {
            maxDiff = Math.max(maxDiff, Math.abs(got[b][t][v] - ref[t][v]));
            maxAbs = Math.max(maxAbs, Math.abs(ref[t][v]));
          }
      }
      expect(maxAbs).toBeGreaterThan(0.5); // the comparison is not vacuous
      expect(maxDiff).toBeLessThanOrEqual(1e-4);
    }
    // The document mask changes the logits after the first boundary (and only there).
    const a = m.logits(ids).arraySync();
    const b = m.logits(ids, docs).arraySync();
    expect(Math.abs(a[0][1][0] - b[0][1][0])).toBeLessThan(1e-6);
    expect(Math.abs(a[0][5][0] - b[0][5][0])).toBeGreaterThan(1e-4);
    m.dispose();
  });

  test.each([
    ['untied', false],
    ['tied', true],
  ])('gradients match finite differences of the float64 reference loss (%s head)', (_name, tied) => {
    const c = testConfig({ d_model: 16, d_ff: 24, vocab_size: 13, tie_embeddings: tied });
    const m = testModel(c, 7);
    const rng = Rng.from(9, 'grad');
    const ids = randomIds(rng, 2, 7, c.vocab_size);
    const lossMask = [Float32Array.from([1, 1, 0, 1, 1, 1]), Float32Array.from([0, 1, 1, 1, 0, 1])];
    const docIds = [Int32Array.from([0, 0, 0, 1, 1, 1, 1]), Int32Array.from([3, 3, 3, 3, 3, 3, 3])];
    const batch = tokenBatch(ids, lossMask, docIds);
    const { loss, grads } = m.lossAndGrads(batch);
    const w = m.getWeights();
    expect(Math.abs(loss.dataSync()[0] - referenceLoss(c, w, ids, lossMask, docIds))).toBeLessThan(1e-5);
    let checked = 0;
    const bad: string[] = [];
    for (const [name, t] of w) {
      const g = grads.get(name)!.dataSync();
      for (let k = 0; k < 3; k++) {
        const i = rng.int(t.data.length);
        const orig = t.data[i];
        t.data[i] = orig + 1e-3;
        const plus = t.data[i];
        const lp = referenceLoss(c, w, ids, lossMask, docIds);
        t.data[i] = orig - 1e-3;
        const minus = t.data[i];
        const lm = referenceLoss(c, w, ids, lossMask, docIds);
        t.data[i] = orig;
        const fd = (lp - lm) / (plus - minus);
        if (Math.abs(fd - g[i]) > 2e-4 + 1e-2 * Math.abs(fd)) bad.push(`${name}[${i}]: fd ${fd} vs ${g[i]}`);
        checked++;
      }
    }
    expect(bad).toEqual([]);
    expect(checked).toBe(3 * w.size);
    loss.dispose();
    for (const t of grads.values()) t.dispose();
    m.dispose();
  });

  test('KV-cache decoding gives the logits of the full forward', () => {
    const c = testConfig({ tie_embeddings: true });
    const m = testModel(c, 11);
    const ids = randomIds(Rng.from(2, 'kv'), 1, 10, c.vocab_size)[0];
    const full = m.logits([ids]).arraySync()[0];
    let cache: KvCache | undefined;
    // Prefill 4 tokens at once, then one at a time.
    const steps = [ids.subarray(0, 4), ...Array.from({ length: 6 }, (_, i) => ids.subarray(4 + i, 5 + i))];
    let pos = 0;
    for (const chunk of steps) {
      const r = m.decode([chunk], cache);
      disposeCache(cache);
      cache = r.cache;
      pos += chunk.length;
      const got = r.logits.dataSync();
      r.logits.dispose();
      for (let v = 0; v < c.vocab_size; v++) expect(Math.abs(got[v] - full[pos - 1][v])).toBeLessThanOrEqual(1e-4);
    }
    expect(cache!.length).toBe(10);
    disposeCache(cache);
    m.dispose();
  });

  test('tf.memory().numTensors stays flat over 200 training steps', () => {
    const c = testConfig({ d_model: 8, n_heads: 2, n_kv_heads: 1, d_ff: 16, n_layers: 1, vocab_size: 16, init_std: 0.02 });
    const m = testModel(c, 1);
    const rng = Rng.from(3, 'mem');
    const counts: number[] = [];
    let first = 0;
    let last = 0;
    for (let step = 0; step < 200; step++) {
      const batch = tokenBatch(randomIds(rng, 1, 5, c.vocab_size), undefined, [Int32Array.from([0, 0, 1, 1, 1])]);
      tf.tidy(() => {
        const { loss, grads } = m.lossAndGrads(batch);
        for (const [name, v] of m.trainableVariables()) v.assign(tf.sub(v, tf.mul(grads.get(name)!, 0.1)));
        const l = loss.dataSync()[0];
        if (step === 0) first = l;
        last = l;
      });
      counts.push(tf.memory().numTensors);
    }
    expect(new Set(counts.slice(1)).size).toBe(1);
    expect(Number.isFinite(last)).toBe(true);
    expect(first).toBeGreaterThan(0);
    m.dispose();
  });
});

import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/backend/backend';
import { fusedKernels } from '../../src/backend/fused_kernels';
import { backendKernels } from '../../src/backend/kernels';
import type { TokenBatch } from '../../src/data/batch';
import { REFERENCE_KERNELS } from '../../src/model/layers';
import { disposeCache } from '../../src/model/model';
import { Rng } from '../../src/util/rng';
import { randomIds, testConfig, testModel } from './helpers';

/**
 * The two kernel sets side by side (src/backend/kernel_set.ts): a model on the reference
 * blocks of layers.ts (plain tfjs, autodiff) and the same weights on the fused set's tfjs form
 * (folded norms and 1/√hd, hand-written gradients) give the same loss, gradients and decoding
 * logits. The native form of the fused set is held to its tfjs form in test/backend/fused_ops.test.ts.
 */
const maxRelDiff = (a: tf.Tensor, b: tf.Tensor) =>
  tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0] / Math.max(1e-30, tf.max(tf.abs(b)).dataSync()[0]));

function batchOf(vocab: number, T: number): TokenBatch {
  const B = 2;
  const ids = new Int32Array(B * (T + 1));
  randomIds(Rng.from(5, 'rows'), B, T + 1, vocab).forEach((r, b) => ids.set(r, b * (T + 1)));
  const lossMask = Uint8Array.from(ids, (_, i) => (i % (T + 1) === 0 || i % 5 === 2 ? 0 : 1));
  const docIds = Int32Array.from(ids, (_, i) => (i % (T + 1) < 6 ? 0 : 1));
  return { batchSize: B, seqLen: T, ids, lossMask, docIds };
}

describe('kernel sets', () => {
  beforeAll(async () => {
    await initBackend('cpu', () => undefined);
  });

  it('the set chosen at backend start is the fused one (its tfjs form on cpu)', () => {
    expect(backendKernels().name).toBe('fused');
    expect(backendKernels()).toBe(backendKernels());
  });

  it.each([true, false])('reference and fused give the same loss, gradients and logits (GQA, document mask, tied head: %s)', (tied) => {
    const config = testConfig({ tie_embeddings: tied, doc_attention_mask: true });
    const ref = testModel(config, 3, REFERENCE_KERNELS);
    const fused = testModel(config, 3, fusedKernels(undefined));
    const batch = batchOf(config.vocab_size, config.max_seq_len);
    const [a, b] = [ref.lossAndGrads(batch), fused.lossAndGrads(batch)];
    expect(Math.abs(a.loss.dataSync()[0] - b.loss.dataSync()[0])).toBeLessThan(1e-5);
    for (const [name, g] of a.grads) expect([name, maxRelDiff(g, b.grads.get(name) as tf.Tensor) < 1e-4]).toEqual([name, true]);
    const ids = [Int32Array.from({ length: 7 }, (_, i) => (i * 13) % config.vocab_size)];
    const [la, lb] = [ref.decode(ids), fused.decode(ids)];
    expect(maxRelDiff(la.logits, lb.logits)).toBeLessThan(1e-5);
    for (const d of [la, lb]) {
      d.logits.dispose();
      disposeCache(d.cache);
    }
    for (const r of [a, b]) {
      r.loss.dispose();
      for (const g of r.grads.values()) g.dispose();
    }
    for (const m of [ref, fused]) m.dispose();
  });
});

import { initBackend } from '../../src/backend/backend';
import { resolveModelConfig } from '../../src/model/config';
import { LlamaModel } from '../../src/model/model';
import { AdamW } from '../../src/train/adamw';
import { trainableLlama } from '../../src/train/adapters';
import { trainStep } from '../../src/train/step';
import type { TokenBatch } from '../../src/data/batch';
import { Rng } from '../../src/util/rng';
import { sliceRows } from './helpers';

/** Gradient accumulation on the real Llama model, with loss masks and document ids. */
beforeAll(async () => {
  await initBackend('wasm', () => undefined);
});

function batch(rows: number, T: number, V: number): TokenBatch {
  const rng = Rng.from(11, 'llama-accum');
  const w = T + 1;
  const ids = new Int32Array(rows * w);
  const lossMask = new Uint8Array(rows * w);
  const docIds = new Int32Array(rows * w);
  for (let r = 0; r < rows; r++) {
    const cut = rng.range(2, T - 2);
    for (let i = 0; i < w; i++) {
      ids[r * w + i] = rng.int(V);
      lossMask[r * w + i] = i > 0 && rng.bool(0.7 - 0.05 * r) ? 1 : 0; // rows differ in token counts
      docIds[r * w + i] = i < cut ? 0 : 1;
    }
  }
  return { batchSize: rows, seqLen: T, ids, lossMask, docIds };
}

it('1×(batch 8) and 4×(batch 2) give the same update', () => {
  const cfg = resolveModelConfig({ vocab_size: 50, d_model: 16, n_layers: 1, n_heads: 2, d_ff: 32, max_seq_len: 16 });
  const full = batch(8, 12, 50);
  const weights = [1, 4].map((k) => {
    const llama = LlamaModel.create(cfg, 3);
    const model = trainableLlama(llama, cfg, 12);
    const opt = new AdamW(
      model.params.map((p) => ({ ...p, decay: p.variable.rank > 1 })),
      { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 },
    );
    const rows = 8 / k;
    const micro = Array.from({ length: k }, (_, i) => sliceRows(full, i * rows, (i + 1) * rows));
    // Three steps on the same batch: Adam's first update is ≈ lr·sign(g), later ones depend on
    // the gradient values through m/√v, so they expose any difference in the accumulated gradient.
    const r = [0, 1, 2].map(() => trainStep(model, opt, micro, { lr: 1e-3, gradClip: 1 }));
    const w = model.getWeights();
    opt.dispose();
    llama.dispose();
    return { r, w };
  });
  for (let s = 0; s < 3; s++) {
    expect(weights[1].r[s].tokens).toBe(weights[0].r[s].tokens);
    expect(weights[1].r[s].loss).toBeCloseTo(weights[0].r[s].loss, 5);
    expect(weights[1].r[s].gradNorm).toBeCloseTo(weights[0].r[s].gradNorm, 5);
  }
  expect(weights[0].r[2].loss).toBeLessThan(weights[0].r[0].loss);
  let maxDiff = 0;
  let moved = 0;
  const init = (() => {
    const l = LlamaModel.create(cfg, 3);
    const w = new Map([...l.getWeights()].map(([k, v]) => [k, v.data]));
    l.dispose();
    return w;
  })();
  for (const [k, { data: v }] of weights[0].w) {
    const u = weights[1].w.get(k)!.data;
    for (let i = 0; i < v.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(v[i] - u[i]));
      moved = Math.max(moved, Math.abs(v[i] - init.get(k)![i]));
    }
  }
  expect(moved).toBeGreaterThan(1e-3); // the updates are real (≈ lr per weight per step)
  expect(maxDiff).toBeLessThan(1e-5);
});

import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { AdamW, decayRule } from '../../src/train/adamw';
import { applyGradients } from '../../src/train/optimizer';
import { lrAt } from '../../src/train/schedule';
import { trainStep } from '../../src/train/step';
import { Rng } from '../../src/util/rng';
import { expectSameRun, resumeRoundTrip, sliceRows, syntheticBatch, tinyModel } from './helpers';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('lr schedules', () => {
  const paper = { kind: 'cosine', peak_lr: 1e-3, warmup_steps: 750, min_lr: 0 } as const;
  it('warms up linearly to the peak, then cosine-decays to the floor on the last step', () => {
    expect(lrAt(paper, 0, 10000)).toBeCloseTo(1e-3 / 750, 12);
    expect(lrAt(paper, 374, 10000)).toBeCloseTo(0.5e-3, 12);
    expect(lrAt(paper, 749, 10000)).toBeCloseTo(1e-3, 12);
    expect(lrAt(paper, 750, 10000)).toBeCloseTo(1e-3, 12);
    const mid = 750 + (10000 - 750 - 1) / 2;
    expect(lrAt(paper, mid, 10000)).toBeCloseTo(0.5e-3, 9);
    expect(lrAt(paper, 9999, 10000)).toBeCloseTo(0, 12);
    for (let s = 751; s < 10000; s += 97) expect(lrAt(paper, s, 10000)).toBeLessThan(lrAt(paper, s - 1, 10000));
  });
  it('cosine holds its floor after decay_steps', () => {
    const c = { kind: 'cosine', peak_lr: 1, warmup_steps: 0, min_lr: 0.1, decay_steps: 11 } as const;
    expect(lrAt(c, 0, 100)).toBe(1);
    expect(lrAt(c, 10, 100)).toBeCloseTo(0.1, 12);
    expect(lrAt(c, 50, 100)).toBeCloseTo(0.1, 12);
  });
  it('WSD is flat until the decay window and reaches the floor at the end', () => {
    const w = { kind: 'wsd', peak_lr: 1, warmup_steps: 10, min_lr: 0, decay_fraction: 0.2, decay_shape: 'linear' } as const;
    expect(lrAt(w, 4, 100)).toBeCloseTo(0.5, 12);
    expect(lrAt(w, 50, 100)).toBe(1);
    expect(lrAt(w, 79, 100)).toBe(1);
    expect(lrAt(w, 80, 100)).toBeCloseTo(0.95, 12);
    expect(lrAt(w, 99, 100)).toBeCloseTo(0, 12);
  });
  it('constant', () => {
    expect(lrAt({ kind: 'constant', peak_lr: 3e-4, warmup_steps: 0 }, 123, 200)).toBe(3e-4);
  });
});

describe('AdamW', () => {
  it('matches a float64 reference of PyTorch AdamW, decay only where selected', () => {
    const opts = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 };
    const w0 = [0.5, -1.25, 2.0, 0.75];
    const a = tf.variable(tf.tensor(w0, [2, 2]), true, 'ref.a');
    const b = tf.variable(tf.tensor(w0, [4]), true, 'ref.b');
    const opt = new AdamW(
      [
        { name: 'a', variable: a, decay: true },
        { name: 'b', variable: b, decay: false },
      ],
      opts,
    );
    const ref = { a: [...w0], b: [...w0], ma: [0, 0, 0, 0], va: [0, 0, 0, 0], mb: [0, 0, 0, 0], vb: [0, 0, 0, 0] };
    const gradsSeq = [
      [0.1, -0.2, 0.3, 0.0],
      [-0.5, 0.25, 1.0, 2.0],
      [0.01, 0.02, -0.03, 0.04],
    ];
    gradsSeq.forEach((g, i) => {
      const t = i + 1;
      const lr = 0.01 * t;
      const scale = 0.5;
      const grads = new Map([
        ['a', tf.tensor(g, [2, 2])],
        ['b', tf.tensor(g, [4])],
      ]);
      applyGradients(opt, grads, lr, scale);
      for (const [p, m, v, decay] of [
        [ref.a, ref.ma, ref.va, true],
        [ref.b, ref.mb, ref.vb, false],
      ] as const) {
        for (let k = 0; k < 4; k++) {
          const gk = g[k] * scale;
          m[k] = 0.9 * m[k] + 0.1 * gk;
          v[k] = 0.95 * v[k] + 0.05 * gk * gk;
          const upd = m[k] / (1 - 0.9 ** t) / (Math.sqrt(v[k] / (1 - 0.95 ** t)) + 1e-8);
          p[k] = p[k] * (decay ? 1 - lr * 0.1 : 1) - lr * upd;
        }
      }
      grads.forEach((x) => x.dispose());
    });
    const gotA = Array.from(a.dataSync());
    const gotB = Array.from(b.dataSync());
    gotA.forEach((x, k) => expect(x).toBeCloseTo(ref.a[k], 5));
    gotB.forEach((x, k) => expect(x).toBeCloseTo(ref.b[k], 5));
    expect(gotA).not.toEqual(gotB); // the decay made a difference
    expect(opt.step).toBe(3);
  });

  it('restoring a saved state continues bit for bit', () => {
    const { straight, resumed } = resumeRoundTrip('resume', (model) =>
      new AdamW(
        model.params.map((p) => ({ name: p.name, variable: p.variable, decay: p.variable.rank > 1 })),
        { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 },
      ),
    );
    expectSameRun(straight, resumed);
  });

  it('default decay rule skips vectors and embeddings', () => {
    const rule = decayRule(['embed_tokens'], false);
    expect(rule('model.layers.0.self_attn.q_proj.weight', [8, 8])).toBe(true);
    expect(rule('model.embed_tokens.weight', [10, 8])).toBe(false);
    expect(rule('model.norm.weight', [8])).toBe(false);
    expect(rule('lm_head.bias', [10])).toBe(false);
    expect(decayRule([], true)('model.norm.weight', [8])).toBe(true);
  });
});

describe('train step', () => {
  it('1 micro-batch of 8 rows and 4 of 2 rows give the same update (token-normalized accumulation)', () => {
    const batch = syntheticBatch(Rng.from(5, 'accum'), 13, 8, 10);
    const results = [1, 4].map((k) => {
      const model = tinyModel(13, 8, 7, `accum${k}`);
      const opt = new AdamW(
        model.params.map((p) => ({ name: p.name, variable: p.variable, decay: p.variable.rank > 1 })),
        { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 },
      );
      const rows = 8 / k;
      const micro = Array.from({ length: k }, (_, i) => sliceRows(batch, i * rows, (i + 1) * rows));
      const r1 = trainStep(model, opt, micro, { lr: 0.01, gradClip: 0 });
      const r2 = trainStep(model, opt, micro, { lr: 0.01, gradClip: 0 });
      return { r1, r2, w: model.getWeights() };
    });
    const [one, four] = results;
    expect(four.r1.tokens).toBe(one.r1.tokens);
    expect(four.r1.loss).toBeCloseTo(one.r1.loss, 5);
    expect(four.r1.gradNorm).toBeCloseTo(one.r1.gradNorm, 5);
    expect(four.r2.loss).toBeCloseTo(one.r2.loss, 5);
    let maxDiff = 0;
    for (const [k, v] of one.w) {
      const u = four.w.get(k)!;
      for (let i = 0; i < v.length; i++) maxDiff = Math.max(maxDiff, Math.abs(v[i] - u[i]));
    }
    expect(maxDiff).toBeLessThan(1e-5);
    // Rows have different numbers of unmasked tokens, so averaging per-micro-batch means would differ:
    // the test would catch mean-of-means accumulation.
  });

  it('clips the global gradient norm and reports the pre-clip norm', () => {
    const model = tinyModel(9, 4, 2, 'clip');
    const before = model.getWeights();
    const opt = new AdamW(
      model.params.map((p) => ({ name: p.name, variable: p.variable, decay: false })),
      { beta1: 0, beta2: 0, eps: 0, weightDecay: 0 },
    );
    // β=0, ε=0: AdamW's update is sign(g)·lr, independent of clipping scale; so instead check the
    // optimizer saw a scaled gradient via the moment m (β1=0 → m = clipped g).
    const r = trainStep(model, opt, [syntheticBatch(Rng.from(1, 'c'), 9, 4, 6)], { lr: 0.1, gradClip: 1e-3 });
    expect(r.gradNorm).toBeGreaterThan(1e-3);
    let sq = 0;
    for (const [k, v] of opt.state().moments) if (k.startsWith('m.')) for (const x of v) sq += x * x;
    expect(Math.sqrt(sq)).toBeCloseTo(1e-3, 6);
    expect(model.getWeights().get('lm_head.weight')).not.toEqual(before.get('lm_head.weight'));
  });

  it('skips the update on a NaN loss and leaves weights and moments untouched', () => {
    const model = tinyModel(9, 4, 2, 'nan');
    const opt = new AdamW(
      model.params.map((p) => ({ name: p.name, variable: p.variable, decay: true })),
      { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 },
    );
    const before = model.getWeights();
    model.params[1].variable.assign(tf.fill([4], NaN));
    const poisoned = model.getWeights();
    const r = trainStep(model, opt, [syntheticBatch(Rng.from(1, 'n'), 9, 2, 6)], { lr: 0.1, gradClip: 1 });
    expect(r.skipped).toBe(true);
    expect(opt.step).toBe(0);
    expect(model.getWeights().get('lm_head.weight')).toEqual(before.get('lm_head.weight'));
    expect(model.getWeights().get('model.embed_tokens.weight')).toEqual(poisoned.get('model.embed_tokens.weight'));
  });

  it('does not leak tensors', () => {
    const model = tinyModel(9, 4, 2, 'leak');
    const opt = new AdamW(
      model.params.map((p) => ({ name: p.name, variable: p.variable, decay: true })),
      { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 },
    );
    const rng = Rng.from(1, 'l');
    trainStep(model, opt, [syntheticBatch(rng, 9, 2, 6)], { lr: 0.1, gradClip: 1 });
    const n = tf.memory().numTensors;
    for (let i = 0; i < 3; i++) trainStep(model, opt, [syntheticBatch(rng, 9, 2, 6), syntheticBatch(rng, 9, 2, 6)], { lr: 0.1, gradClip: 1 });
    expect(tf.memory().numTensors).toBe(n);
  });
});

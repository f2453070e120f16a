import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { AdamW } from '../../src/train/adamw';
import { applyGradients } from '../../src/train/optimizer';
import { Muon, isHiddenMatrix, newtonSchulz } from '../../src/train/muon';
import { OptimSchema } from '../../src/train/config';
import { Rng } from '../../src/util/rng';
import { expectSameRun, resumeRoundTrip } from './helpers';

beforeAll(async () => {
  await tf.setBackend('cpu');
});

type Mat = number[][];
const matmul = (a: Mat, b: Mat): Mat => a.map((row) => b[0].map((_, j) => row.reduce((s, x, k) => s + x * b[k][j], 0)));
const transpose = (a: Mat): Mat => a[0].map((_, j) => a.map((row) => row[j]));
const combine = (a: Mat, ka: number, b: Mat, kb: number): Mat => a.map((row, i) => row.map((x, j) => ka * x + kb * b[i][j]));
const toMat = (flat: ArrayLike<number>, rows: number, cols: number): Mat => Array.from({ length: rows }, (_, i) => Array.from(flat).slice(i * cols, (i + 1) * cols));

/** The quintic Newton–Schulz iteration in float64, written from its definition (rows ≤ cols). */
function newtonSchulzRef(g: Mat, steps: number): Mat {
  const norm = Math.sqrt(g.flat().reduce((s, x) => s + x * x, 0));
  let x = g.map((row) => row.map((v) => v / (norm + 1e-7)));
  for (let i = 0; i < steps; i++) {
    const gram = matmul(x, transpose(x));
    const poly = combine(gram, -4.775, matmul(gram, gram), 2.0315);
    x = combine(x, 3.4445, matmul(poly, x), 1);
  }
  return x;
}

const randomMat = (rng: Rng, rows: number, cols: number): Mat => Array.from({ length: rows }, () => Array.from({ length: cols }, () => rng.normal()));

describe('newtonSchulz', () => {
  it('computes the quintic iteration on each matrix of a batch', () => {
    const rng = Rng.from(1, 'ns');
    const mats = [randomMat(rng, 3, 5), randomMat(rng, 3, 5)];
    const got = newtonSchulz(tf.tensor3d(mats), 5);
    const arr = got.arraySync();
    mats.forEach((m, b) => {
      const want = newtonSchulzRef(m, 5);
      want.forEach((row, i) => row.forEach((v, j) => expect(arr[b][i][j]).toBeCloseTo(v, 4)));
    });
    got.dispose();
  });

  it('pushes every singular value near 1: |Oᵀx| ≈ |x| for every direction x', () => {
    const rng = Rng.from(2, 'ns');
    const g = randomMat(rng, 8, 32);
    const o = newtonSchulz(tf.tensor3d([g]), 5).arraySync()[0];
    const gain = (m: Mat, x: number[]) => Math.hypot(...transpose(m).map((col) => col.reduce((s, v, i) => s + v * x[i], 0))) / Math.hypot(...x);
    const norm = Math.hypot(...g.flat());
    const inputGains: number[] = [];
    for (let k = 0; k < 50; k++) {
      const x = Array.from({ length: 8 }, () => rng.normal());
      // the quintic's fixed band is about [0.7, 1.2]
      expect(gain(o, x)).toBeGreaterThan(0.65);
      expect(gain(o, x)).toBeLessThan(1.25);
      inputGains.push(gain(g, x) / norm);
    }
    // the normalized input is far from it (its squared singular values sum to 1 over 8 directions)
    expect(Math.max(...inputGains)).toBeLessThan(0.65);
  });
});

describe('Muon', () => {
  it('updates hidden matrices by the orthogonalized Nesterov momentum, everything else by AdamW', () => {
    const adamOpts = { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 };
    const muonOpts = { momentum: 0.95, nsSteps: 5, updateScale: 0.2 };
    const rng = Rng.from(4, 'muon');
    const wide = randomMat(rng, 2, 3);
    const tall = randomMat(rng, 3, 2);
    const emb = randomMat(rng, 4, 2);
    const vars = {
      wide: tf.variable(tf.tensor2d(wide), true, 'muon.wide'),
      tall: tf.variable(tf.tensor2d(tall), true, 'muon.tall'),
      emb: tf.variable(tf.tensor2d(emb), true, 'muon.emb'),
      embAlone: tf.variable(tf.tensor2d(emb), true, 'muon.embAlone'),
    };
    const names = { wide: 'model.layers.0.mlp.up_proj.weight', tall: 'model.layers.1.mlp.down_proj.weight', emb: 'model.embed_tokens.weight' };
    const muon = new Muon(
      [
        { name: names.wide, variable: vars.wide, decay: true },
        { name: names.tall, variable: vars.tall, decay: false },
        { name: names.emb, variable: vars.emb, decay: false },
      ],
      adamOpts,
      muonOpts,
    );
    const adam = new AdamW([{ name: names.emb, variable: vars.embAlone, decay: false }], adamOpts);
    const ref = { wide: wide.map((r) => [...r]), tall: tall.map((r) => [...r]) };
    const mom = { wide: wide.map((r) => r.map(() => 0)), tall: tall.map((r) => r.map(() => 0)) };
    for (let t = 1; t <= 3; t++) {
      const lr = 0.01 * t;
      const scale = 0.5;
      const g = { wide: randomMat(rng, 2, 3), tall: randomMat(rng, 3, 2), emb: randomMat(rng, 4, 2) };
      applyGradients(
        muon,
        new Map([
          [names.wide, tf.tensor2d(g.wide)],
          [names.tall, tf.tensor2d(g.tall)],
          [names.emb, tf.tensor2d(g.emb)],
        ]),
        lr,
        scale,
      );
      applyGradients(adam, new Map([[names.emb, tf.tensor2d(g.emb)]]), lr, scale);
      for (const [key, decay] of [
        ['wide', true],
        ['tall', false],
      ] as const) {
        const gs = g[key].map((r) => r.map((x) => x * scale));
        mom[key] = combine(mom[key], 0.95, gs, 0.05);
        const u = combine(mom[key], 0.95, gs, 0.05);
        const o = key === 'wide' ? newtonSchulzRef(u, 5) : transpose(newtonSchulzRef(transpose(u), 5));
        ref[key] = combine(ref[key], decay ? 1 - lr * 0.1 : 1, o, -lr * 0.2 * Math.sqrt(3));
      }
    }
    for (const key of ['wide', 'tall'] as const) {
      const got = vars[key].arraySync() as Mat;
      ref[key].forEach((row, i) => row.forEach((v, j) => expect(got[i][j]).toBeCloseTo(v, 5)));
    }
    expect(Array.from(vars.emb.dataSync())).toEqual(Array.from(vars.embAlone.dataSync()));
    expect(muon.step).toBe(3);
    expect([...muon.state().moments.keys()].sort()).toEqual([`m.${names.emb}`, `m.${names.wide}`, `m.${names.tall}`, `v.${names.emb}`]);
  });

  it('restoring a saved state continues bit for bit', () => {
    const { straight, resumed } = resumeRoundTrip(
      'muon-resume',
      (model) =>
        new Muon(
          model.params.map((p) => ({ name: p.name, variable: p.variable, decay: p.variable.rank > 1 })),
          { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 },
          { momentum: 0.95, nsSteps: 5, updateScale: 0.2 },
        ),
      // the head renamed into a block, so Muon takes it
      'model.layers.0.mlp.down_proj.weight',
    );
    expect(straight.losses[5]).toBeLessThan(straight.losses[0]);
    expectSameRun(straight, resumed);
  });

  it('takes the transformer blocks’ matrices only, and is off unless configured', () => {
    expect(isHiddenMatrix('model.layers.2.self_attn.q_proj.weight', [8, 8])).toBe(true);
    expect(isHiddenMatrix('model.layers.2.input_layernorm.weight', [8])).toBe(false);
    expect(isHiddenMatrix('model.embed_tokens.weight', [10, 8])).toBe(false);
    expect(isHiddenMatrix('lm_head.weight', [8, 10])).toBe(false);
    expect(OptimSchema.parse({}).muon).toBeNull();
    expect(OptimSchema.parse({ muon: {} }).muon).toEqual({ momentum: 0.95, ns_steps: 5, update_scale: 0.2 });
    expect(() => OptimSchema.parse({ muon: { momentum: 1 } })).toThrow();
  });
});

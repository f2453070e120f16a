import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { Rng, RngState } from '../../src/util/rng';
import type { TokenBatch } from '../../src/data/batch';
import type { BatchStream, TrainableModel } from '../../src/train/types';
import type { Optimizer } from '../../src/train/optimizer';
import { trainStep } from '../../src/train/step';

/**
 * A small real model for unit tests of the optimizer and loop, independent of src/model:
 * embedding → RMS-style scale (a 1-D "norm" weight) → linear head with bias, trained with a
 * masked cross entropy summed over target tokens.
 */
export function tinyModel(vocab: number, dim: number, seed: number, prefix = '', headName = 'lm_head.weight'): TrainableModel {
  const rng = Rng.from(seed, 'tiny-model');
  const init = (n: number, std: number) => Float32Array.from({ length: n }, () => rng.normal() * std);
  const mk = (name: string, shape: number[], data: Float32Array) => ({
    name,
    variable: tf.variable(tf.tensor(data, shape), true, `${prefix}${name}#${Math.random()}`),
  });
  const params = [
    mk('model.embed_tokens.weight', [vocab, dim], init(vocab * dim, 0.5)),
    mk('model.norm.weight', [dim], new Float32Array(dim).fill(1)),
    mk(headName, [dim, vocab], init(dim * vocab, 0.5)),
    mk('lm_head.bias', [vocab], new Float32Array(vocab)),
  ];
  const [emb, norm, head, bias] = params.map((p) => p.variable);
  return {
    params,
    flopsPerToken: 6 * dim * vocab,
    lossSum(b: TokenBatch): tf.Scalar {
      const w = b.seqLen + 1;
      const n = b.batchSize * b.seqLen;
      const inputs = new Int32Array(n);
      const targets = new Int32Array(n);
      const mask = new Float32Array(n);
      for (let r = 0; r < b.batchSize; r++) {
        for (let t = 0; t < b.seqLen; t++) {
          inputs[r * b.seqLen + t] = b.ids[r * w + t];
          targets[r * b.seqLen + t] = b.ids[r * w + t + 1];
          mask[r * b.seqLen + t] = b.lossMask[r * w + t + 1] ? 1 : 0;
        }
      }
      // tfjs-core's CommonJS build registers no gradients, so the loss carries its own backward.
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      const f = tf.customGrad(((...args: tf.Tensor[]) => {
        const [e0, nw, hw, bw] = args as [tf.Tensor2D, tf.Tensor1D, tf.Tensor2D, tf.Tensor1D];
        const save = args[4] as unknown as (ts: tf.Tensor[]) => void;
        const inp = tf.tensor1d(inputs, 'int32');
        const tgt = tf.tensor1d(targets, 'int32');
        const m = tf.tensor1d(mask);
        const e = tf.gather(e0, inp);
        const x = tf.mul(e, nw) as tf.Tensor2D;
        const logits = tf.add(tf.matMul(x, hw), bw) as tf.Tensor2D;
        const onehot = tf.oneHot(tgt, vocab);
        const picked = tf.sum(tf.mul(tf.logSoftmax(logits), onehot), -1);
        const value = tf.neg(tf.sum(tf.mul(picked, m))) as tf.Scalar;
        save([inp, m, e, x, logits, onehot, nw, hw]);
        const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
          const [inp, m, e, x, logits, onehot, nw, hw] = saved as [
            tf.Tensor1D, tf.Tensor1D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor2D, tf.Tensor1D, tf.Tensor2D,
          ];
          const dl = tf.mul(tf.mul(tf.sub(tf.softmax(logits), onehot), tf.expandDims(m, 1)), dy) as tf.Tensor2D;
          const dx = tf.matMul(dl, hw, false, true);
          return [
            tf.unsortedSegmentSum(tf.mul(dx, nw), inp, vocab),
            tf.sum(tf.mul(dx, e), 0),
            tf.matMul(x, dl, true, false),
            tf.sum(dl, 0),
          ];
        };
        return { value, gradFunc };
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
      }) as any);
      return f(emb, norm, head, bias) as tf.Scalar;
    },
    getWeights() {
      return new Map(params.map((p) => [p.name, { shape: [...p.variable.shape], data: p.variable.dataSync() as Float32Array }]));
    },
    setWeights(w) {
      for (const p of params) p.variable.assign(tf.tensor(w.get(p.name)!.data, p.variable.shape));
    },
  };
}

/**
 * A deterministic stream of batches from a learnable rule (next = (3·cur + 1) mod V, with 10%
 * noise) with random loss masks; its state is the RNG state, as in the real loader.
 */
export class SyntheticStream implements BatchStream {
  private rng: Rng;
  constructor(
    readonly vocab: number,
    readonly batchSize: number,
    readonly seqLen: number,
    seed: number,
    state?: RngState,
  ) {
    this.rng = state ? Rng.fromState(state) : Rng.from(seed, 'synthetic');
  }
  next(): TokenBatch {
    return syntheticBatch(this.rng, this.vocab, this.batchSize, this.seqLen);
  }
  state(): RngState {
    return this.rng.state();
  }
}

export function syntheticBatch(rng: Rng, vocab: number, rows: number, seqLen: number): TokenBatch {
  const w = seqLen + 1;
  const ids = new Int32Array(rows * w);
  const lossMask = new Uint8Array(rows * w);
  for (let r = 0; r < rows; r++) {
    let cur = rng.int(vocab);
    for (let i = 0; i < w; i++) {
      ids[r * w + i] = cur;
      lossMask[r * w + i] = i > 0 && rng.bool(0.8) ? 1 : 0;
      cur = rng.bool(0.9) ? (3 * cur + 1) % vocab : rng.int(vocab);
    }
  }
  return { batchSize: rows, seqLen, ids, lossMask };
}

/** Rows [from, to) of a batch as a new batch. */
export function sliceRows(b: TokenBatch, from: number, to: number): TokenBatch {
  const w = b.seqLen + 1;
  return {
    batchSize: to - from,
    seqLen: b.seqLen,
    ids: b.ids.slice(from * w, to * w),
    lossMask: b.lossMask.slice(from * w, to * w),
    docIds: b.docIds?.slice(from * w, to * w),
  };
}

/**
 * Six steps of a tiny model, once straight through and once with the optimizer's state and the
 * weights saved after step 3 and restored into a fresh optimizer and clobbered weights: exact
 * resume means the two runs' losses and final weights are the same bit for bit.
 */
export function resumeRoundTrip(label: string, mk: (model: TrainableModel) => Optimizer, headName?: string): { straight: RunTrace; resumed: RunTrace } {
  const run = (split: boolean): RunTrace => {
    const model = tinyModel(11, 6, 1, `${label}${split}`, headName);
    let opt = mk(model);
    const rng = Rng.from(3, 'batches');
    const losses: number[] = [];
    for (let s = 0; s < 6; s++) {
      if (split && s === 3) {
        const st = opt.state();
        const weights = model.getWeights();
        opt.dispose();
        for (const p of model.params) p.variable.assign(tf.zerosLike(p.variable));
        model.setWeights(weights);
        opt = mk(model);
        opt.restore(st);
      }
      losses.push(trainStep(model, opt, [syntheticBatch(rng, 11, 3, 8)], { lr: 0.05, gradClip: 1 }).loss);
    }
    return { losses, weights: model.getWeights() };
  };
  return { straight: run(false), resumed: run(true) };
}

interface RunTrace {
  losses: number[];
  weights: Map<string, { shape: number[]; data: Float32Array }>;
}

/** The same losses and the same weight bytes. */
export function expectSameRun(a: RunTrace, b: RunTrace): void {
  expect(b.losses).toEqual(a.losses);
  for (const [k, v] of a.weights) expect(Buffer.from(b.weights.get(k)!.data.buffer).equals(Buffer.from(v.data.buffer))).toBe(true);
}

import * as tf from '@tensorflow/tfjs-core';
import { backendKernels, type KernelSet } from '../backend/kernels';
import { flattenGroup } from '../backend/kernel_set';
import type { Optimizer, OptimizerState } from './optimizer_types';

/**
 * AdamW (Loshchilov & Hutter) with decoupled weight decay, written on tfjs tensors so every
 * piece of its state is a named Float32Array that a checkpoint stores bit for bit:
 *
 *   m ← β1·m + (1−β1)·g          v ← β2·v + (1−β2)·g²
 *   p ← p·(1 − lr·wd) − lr · (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε)
 *
 * which is PyTorch's torch.optim.AdamW. The decay multiplies the weights directly (decoupled),
 * and only parameters selected by `decays(name, shape)` get it. The kernel set (by default the
 * one chosen at backend start) supplies Σg² and, when it runs the native library, the one-op
 * update; the gradients it receives have one layout either way (groupGrads).
 */
export interface AdamWOptions {
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
}

export interface NamedParam {
  name: string;
  variable: tf.Variable;
  decay: boolean;
}

/** AdamW's state: `m.<param name>` and `v.<param name>` moments. */
export type AdamWState = OptimizerState;

/**
 * The parameters that share a decay setting, updated as one flat vector: one set of ~12
 * elementwise ops per group instead of per parameter. On the native backend every op is a
 * TensorFlow eager call with a fixed cost of tens of µs, so per-parameter updates of a
 * 40-tensor model were hundreds of calls per step; the math per element is unchanged.
 */
interface Group {
  decay: boolean;
  params: NamedParam[];
  sizes: number[];
  /** Offset of each parameter in the flat vector. */
  offsets: number[];
  m: tf.Variable;
  v: tf.Variable;
}

export class AdamW implements Optimizer {
  private t = 0;
  private readonly groups: Group[] = [];

  constructor(
    readonly params: NamedParam[],
    readonly opts: AdamWOptions,
    readonly kernels: KernelSet = backendKernels(),
  ) {
    for (const decay of [true, false]) {
      const members = params.filter((p) => p.decay === decay);
      if (!members.length) continue;
      const sizes = members.map((p) => p.variable.size);
      const offsets = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0));
      const total = sizes.reduce((a, b) => a + b, 0);
      this.groups.push({ decay, params: members, sizes, offsets, m: tf.variable(tf.zeros([total]), false), v: tf.variable(tf.zeros([total]), false) });
    }
  }

  get step(): number {
    return this.t;
  }

  describe(): string {
    return `AdamW on ${this.params.length} tensors`;
  }

  /**
   * The gradients of each group as the update reads them (caller disposes): per group, a copy
   * of each parameter's gradient in the parameter's shape, whichever kernel set runs (the fused
   * AdamW reads them in place; the tfjs update flattens each group into one vector).
   */
  groupGrads(grads: Map<string, tf.Tensor>): tf.Tensor[][] {
    return this.groups.map((grp) =>
      tf.tidy(() =>
        grp.params.map((p) => {
          const g = grads.get(p.name);
          if (!g) throw new Error(`AdamW: no gradient for parameter ${p.name}`);
          return tf.clone(g);
        }),
      ),
    );
  }

  /** Σ g² over groupGrads' tensors (the squared global norm), by the kernel set. */
  sumOfSquares(groups: tf.Tensor[][]): tf.Scalar {
    return this.kernels.sumSquares(groups);
  }

  /**
   * One update from groupGrads' gradients (the step computes their norm from them).
   * The scalars are folded the way PyTorch's AdamW computes it (step size lr/bc1, denominator
   * √v/√bc2 + ε, here as (√v + ε·√bc2)/√bc2) and gradScale into the moment coefficients, so an
   * update is 13 elementwise passes per group instead of 16 — or one fused op per group.
   */
  applyGroups(groups: tf.Tensor[][], lr: number, gradScale: number): void {
    this.t += 1;
    const { beta1, beta2, eps, weightDecay } = this.opts;
    const bc1 = 1 - Math.pow(beta1, this.t);
    const sqrtBc2 = Math.sqrt(1 - Math.pow(beta2, this.t));
    const fused = this.kernels.native;
    this.groups.forEach((grp, gi) => {
      tf.tidy(() => {
        if (fused) {
          // One pass reading p, m, v and g once (native/ndbg_ops.cc), with the same float32
          // scalars and order of operations as below; no concat/split of the parameters.
          const decay = grp.decay && weightDecay > 0 ? 1 - lr * weightDecay : 1;
          const coefs = tf.tensor1d([beta1, (1 - beta1) * gradScale, beta2, (1 - beta2) * gradScale * gradScale, (lr * sqrtBc2) / bc1, eps * sqrtBc2, decay]);
          const out = fused.adamW(grp.params.map((p) => p.variable), grp.m, grp.v, groups[gi], coefs);
          grp.params.forEach((p, i) => p.variable.assign(out[i]));
          grp.m.assign(out[grp.params.length]);
          grp.v.assign(out[grp.params.length + 1]);
          return;
        }
        const g = flattenGroup(groups[gi]);
        const mNew = tf.add(tf.mul(grp.m, beta1), tf.mul(g, (1 - beta1) * gradScale));
        const vNew = tf.add(tf.mul(grp.v, beta2), tf.mul(tf.square(g), (1 - beta2) * gradScale * gradScale));
        const update = tf.div(tf.mul(mNew, (lr * sqrtBc2) / bc1), tf.add(tf.sqrt(vNew), eps * sqrtBc2));
        const current = flattenGroup(grp.params.map((p) => p.variable));
        const decayed = grp.decay && weightDecay > 0 ? tf.mul(current, 1 - lr * weightDecay) : current;
        const next = tf.sub(decayed, update);
        const parts = grp.params.length === 1 ? [next] : tf.split(next, grp.sizes);
        grp.params.forEach((p, i) => p.variable.assign(tf.reshape(parts[i], p.variable.shape)));
        grp.m.assign(mNew);
        grp.v.assign(vNew);
      });
    });
  }

  /** A copy of the full state (moments downloaded to the CPU), one `m.`/`v.` entry per parameter. */
  state(): AdamWState {
    const moments = new Map<string, Float32Array>();
    for (const grp of this.groups) {
      const m = grp.m.dataSync() as Float32Array;
      const v = grp.v.dataSync() as Float32Array;
      grp.params.forEach((p, i) => {
        moments.set(`m.${p.name}`, m.slice(grp.offsets[i], grp.offsets[i] + grp.sizes[i]));
        moments.set(`v.${p.name}`, v.slice(grp.offsets[i], grp.offsets[i] + grp.sizes[i]));
      });
    }
    return { t: this.t, moments };
  }

  /** Restores a state from `state()`; every moment must be present with the parameter's size. */
  restore(state: AdamWState): void {
    for (const grp of this.groups) {
      for (const [kind, store] of [
        ['m', grp.m],
        ['v', grp.v],
      ] as const) {
        const flat = new Float32Array(store.size);
        grp.params.forEach((p, i) => {
          const key = `${kind}.${p.name}`;
          const data = state.moments.get(key);
          if (!data) throw new Error(`optimizer state has no moment ${key}`);
          if (data.length !== p.variable.size) {
            throw new Error(`optimizer moment ${key} has ${data.length} values, parameter has ${p.variable.size}`);
          }
          flat.set(data, grp.offsets[i]);
        });
        tf.tidy(() => store.assign(tf.tensor1d(flat)));
      }
    }
    this.t = state.t;
  }

  dispose(): void {
    for (const grp of this.groups) {
      grp.m.dispose();
      grp.v.dispose();
    }
  }
}

/**
 * Default decay rule: decay matrices (rank ≥ 2) except embeddings; never norms or biases
 * (rank 1). `noDecay` regexes (matched against the HF name) exclude more.
 */
export function decayRule(noDecay: string[], decayVectors: boolean): (name: string, shape: number[]) => boolean {
  const patterns = noDecay.map((p) => new RegExp(p));
  return (name, shape) => {
    if (!decayVectors && shape.length < 2) return false;
    return !patterns.some((re) => re.test(name));
  };
}

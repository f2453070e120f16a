import * as tf from '@tensorflow/tfjs-core';
import { AdamW, type AdamWOptions, type NamedParam } from './adamw';
import type { Optimizer, OptimizerState } from './optimizer_types';
import type { KernelSet } from '../backend/kernel_set';
import { backendKernels } from '../backend/kernels';

/**
 * Muon (Jordan et al. 2024, "Muon: an optimizer for hidden layers") for the transformer blocks'
 * weight matrices, AdamW for everything else (embeddings, norms): the split every Muon recipe
 * uses, since an embedding row or a norm vector is not a linear map to orthogonalize.
 *
 * For each hidden matrix W with gradient g (already scaled by the step's token count and clip):
 *
 *   m ← μ·m + (1−μ)·g                 u = μ·m + (1−μ)·g      (Nesterov)
 *   O = NewtonSchulz₅(u)              ≈ U·Vᵀ of u's SVD, every singular value pushed near 1
 *   W ← W·(1 − lr·wd) − lr · s·√max(rows, cols) · O
 *
 * The factor s·√max(rows, cols) (s = 0.2 by default) is Moonlight's (Liu et al. 2025): it gives
 * the update the RMS of a typical AdamW update, so the one LR schedule and weight decay of the
 * run serve both optimizers. Matrices of one shape keep their momentum in one stacked buffer,
 * and those of the same shape once tall ones are turned wide are orthogonalized as one batched
 * matmul chain: on the native backend each op is an eager call with a fixed cost, and a 3-layer
 * model has 21 matrices but three shapes (two once turned wide).
 */
export interface MuonOptions {
  /** μ, the momentum of the matrices' update. */
  momentum: number;
  /** Newton–Schulz iterations. */
  nsSteps: number;
  /** s in the update's factor s·√max(rows, cols). */
  updateScale: number;
}

/** The quintic iteration's coefficients, chosen (Jordan 2024) to push every singular value into about [0.7, 1.2] fast. */
const NS_COEFFS = [3.4445, -4.775, 2.0315] as const;

/** Matrices of the transformer blocks; embeddings, the output head and norm vectors stay on AdamW. */
export function isHiddenMatrix(name: string, shape: readonly number[]): boolean {
  return shape.length === 2 && /^model\.layers\.\d+\./.test(name);
}

/** The hidden matrices of one shape, with their momentum buffers stacked into one [n, rows, cols] variable. */
interface Stack {
  params: NamedParam[];
  shape: [number, number];
  momentum: tf.Variable;
  /** Where the stack's gradients start in the hidden-matrix group of groupGrads. */
  offset: number;
}

/** Stacks orthogonalized together: the same shape once tall ones are turned wide (rows ≤ cols). */
interface NsBatch {
  parts: { stack: Stack; transpose: boolean }[];
}

export class Muon implements Optimizer {
  private readonly adam: AdamW;
  private readonly stacks: Stack[] = [];
  private readonly batches: NsBatch[] = [];

  constructor(
    params: NamedParam[],
    readonly adamOpts: AdamWOptions,
    readonly opts: MuonOptions,
    kernels: KernelSet = backendKernels(),
  ) {
    const hidden = params.filter((p) => isHiddenMatrix(p.name, p.variable.shape));
    this.adam = new AdamW(
      params.filter((p) => !hidden.includes(p)),
      adamOpts,
      kernels,
    );
    const byShape = new Map<string, NamedParam[]>();
    for (const p of hidden) {
      const key = p.variable.shape.join('x');
      byShape.set(key, [...(byShape.get(key) ?? []), p]);
    }
    const byWideShape = new Map<string, NsBatch>();
    let offset = 0;
    for (const members of byShape.values()) {
      const [rows, cols] = members[0].variable.shape as [number, number];
      const stack: Stack = { params: members, shape: [rows, cols], momentum: tf.variable(tf.zeros([members.length, rows, cols]), false), offset };
      offset += members.length;
      this.stacks.push(stack);
      const key = `${Math.min(rows, cols)}x${Math.max(rows, cols)}`;
      const batch = byWideShape.get(key) ?? { parts: [] };
      batch.parts.push({ stack, transpose: rows > cols });
      byWideShape.set(key, batch);
    }
    this.batches = [...byWideShape.values()];
  }

  get step(): number {
    return this.adam.step;
  }

  describe(): string {
    return `Muon on ${this.hidden.length} block matrices (momentum ${this.opts.momentum}, ${this.opts.nsSteps} Newton–Schulz steps), ${this.adam.describe()}`;
  }

  private get hidden(): NamedParam[] {
    return this.stacks.flatMap((s) => s.params);
  }

  /** AdamW's groups, then one group of the hidden matrices' gradients, stack by stack (caller disposes). */
  groupGrads(grads: Map<string, tf.Tensor>): tf.Tensor[][] {
    const hidden = tf.tidy(() =>
      this.hidden.map((p) => {
        const g = grads.get(p.name);
        if (!g) throw new Error(`Muon: no gradient for parameter ${p.name}`);
        return tf.clone(g);
      }),
    );
    return [...this.adam.groupGrads(grads), hidden];
  }

  sumOfSquares(groups: tf.Tensor[][]): tf.Scalar {
    return this.adam.sumOfSquares(groups);
  }

  applyGroups(groups: tf.Tensor[][], lr: number, gradScale: number): void {
    this.adam.applyGroups(groups.slice(0, -1), lr, gradScale);
    const hiddenGrads = groups[groups.length - 1];
    const { momentum: mu, updateScale } = this.opts;
    const wd = this.adamOpts.weightDecay;
    for (const batch of this.batches) {
      tf.tidy(() => {
        // m ← μ·m + (1−μ)·g and u = μ·m + (1−μ)·g, one stack at a time
        const nesterov = batch.parts.map(({ stack, transpose }) => {
          const g = tf.mul(tf.stack(hiddenGrads.slice(stack.offset, stack.offset + stack.params.length)), (1 - mu) * gradScale);
          const next = tf.add(tf.mul(stack.momentum, mu), g);
          stack.momentum.assign(next);
          const u = tf.add(tf.mul(next, mu), g);
          return transpose ? tf.transpose(u, [0, 2, 1]) : u;
        });
        const ortho = tf.split(newtonSchulz(tf.concat(nesterov, 0) as tf.Tensor3D, this.opts.nsSteps), batch.parts.map((p) => p.stack.params.length));
        batch.parts.forEach(({ stack, transpose }, i) => {
          const o = transpose ? tf.transpose(ortho[i], [0, 2, 1]) : ortho[i];
          // each matrix's decoupled decay: 1 − lr·wd where the decay rule selects it, else 1
          const decay = tf.reshape(tf.tensor1d(stack.params.map((p) => (p.decay && wd > 0 ? 1 - lr * wd : 1))), [-1, 1, 1]);
          const w = tf.stack(stack.params.map((p) => p.variable));
          const next = tf.unstack(tf.sub(tf.mul(w, decay), tf.mul(o, lr * updateScale * Math.sqrt(Math.max(...stack.shape)))));
          stack.params.forEach((p, k) => p.variable.assign(next[k]));
        });
      });
    }
  }

  /** AdamW's moments plus `m.<name>` (the momentum) for every hidden matrix. */
  state(): OptimizerState {
    const s = this.adam.state();
    for (const stack of this.stacks) {
      const all = stack.momentum.dataSync() as Float32Array;
      const size = stack.shape[0] * stack.shape[1];
      stack.params.forEach((p, k) => s.moments.set(`m.${p.name}`, all.slice(k * size, (k + 1) * size)));
    }
    return s;
  }

  restore(state: OptimizerState): void {
    this.adam.restore(state);
    for (const stack of this.stacks) {
      const size = stack.shape[0] * stack.shape[1];
      const all = new Float32Array(stack.params.length * size);
      stack.params.forEach((p, k) => {
        const key = `m.${p.name}`;
        const data = state.moments.get(key);
        if (!data) throw new Error(`optimizer state has no moment ${key}`);
        if (data.length !== size) throw new Error(`optimizer moment ${key} has ${data.length} values, parameter has ${size}`);
        all.set(data, k * size);
      });
      tf.tidy(() => stack.momentum.assign(tf.tensor(all, stack.momentum.shape)));
    }
  }

  dispose(): void {
    this.adam.dispose();
    for (const stack of this.stacks) stack.momentum.dispose();
  }
}

/**
 * The quintic Newton–Schulz iteration on a batch of wide matrices [n, rows ≤ cols]: each is
 * scaled to Frobenius norm ≤ 1 (so every singular value is ≤ 1), then
 * X ← a·X + (b·A + c·A²)·X with A = X·Xᵀ, which maps each singular value σ to
 * aσ + bσ³ + cσ⁵ and leaves the singular vectors alone.
 */
export function newtonSchulz(g: tf.Tensor3D, steps: number): tf.Tensor3D {
  return tf.tidy(() => {
    const [a, b, c] = NS_COEFFS;
    const norm = tf.sqrt(tf.sum(tf.square(g), [1, 2], true));
    let x = tf.div(g, tf.add(norm, 1e-7)) as tf.Tensor3D;
    for (let i = 0; i < steps; i++) {
      const gram = tf.matMul(x, x, false, true);
      const poly = tf.add(tf.mul(gram, b), tf.mul(tf.matMul(gram, gram), c));
      x = tf.add(tf.mul(x, a), tf.matMul(poly, x)) as tf.Tensor3D;
    }
    return x;
  });
}

import * as tf from '@tensorflow/tfjs-core';

/**
 * AdamW (Loshchilov & Hutter) with decoupled weight decay, written on tfjs tensors so every
 * piece of its state is a named Float32Array that a checkpoint stores bit for bit:
 *
 *   m ← β1·m + (1−β1)·g          v ← β2·v + (1−β2)·g²
 *   p ← p·(1 − lr·wd) − lr · (m / (1−β1^t)) / (√(v / (1−β2^t)) + ε)
 *
 * which is PyTorch's torch.optim.AdamW. The decay multiplies the weights directly (decoupled),
 * and only parameters selected by `decays(name, shape)` get it.
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

export interface AdamWState {
  /** Number of updates applied so far (the bias-correction exponent of the next one minus 1). */
  t: number;
  /** `m.<param name>` and `v.<param name>` moments. */
  moments: Map<string, Float32Array>;
}

export class AdamW {
  private t = 0;
  private readonly m = new Map<string, tf.Variable>();
  private readonly v = new Map<string, tf.Variable>();

  constructor(
    readonly params: NamedParam[],
    readonly opts: AdamWOptions,
  ) {
    for (const p of params) {
      this.m.set(p.name, tf.variable(tf.zerosLike(p.variable), false));
      this.v.set(p.name, tf.variable(tf.zerosLike(p.variable), false));
    }
  }

  get step(): number {
    return this.t;
  }

  /**
   * Applies one update. `grads` are the raw accumulated gradients by param name; `gradScale`
   * multiplies them first (token normalization and clipping folded into one factor, so the
   * gradients are read once).
   */
  apply(grads: Map<string, tf.Tensor>, lr: number, gradScale: number): void {
    this.t += 1;
    const { beta1, beta2, eps, weightDecay } = this.opts;
    const bc1 = 1 - Math.pow(beta1, this.t);
    const bc2 = 1 - Math.pow(beta2, this.t);
    for (const p of this.params) {
      const g0 = grads.get(p.name);
      if (!g0) throw new Error(`AdamW: no gradient for parameter ${p.name}`);
      const m = this.m.get(p.name)!;
      const v = this.v.get(p.name)!;
      tf.tidy(() => {
        const g = gradScale === 1 ? g0 : tf.mul(g0, gradScale);
        const mNew = tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1));
        const vNew = tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2));
        const denom = tf.add(tf.sqrt(tf.div(vNew, bc2)), eps);
        const update = tf.div(tf.div(mNew, bc1), denom);
        const decayed = p.decay && weightDecay > 0 ? tf.mul(p.variable, 1 - lr * weightDecay) : p.variable;
        p.variable.assign(tf.sub(decayed, tf.mul(update, lr)));
        m.assign(mNew);
        v.assign(vNew);
      });
    }
  }

  /** A copy of the full state (moments downloaded to the CPU). */
  state(): AdamWState {
    const moments = new Map<string, Float32Array>();
    for (const p of this.params) {
      moments.set(`m.${p.name}`, this.m.get(p.name)!.dataSync() as Float32Array);
      moments.set(`v.${p.name}`, this.v.get(p.name)!.dataSync() as Float32Array);
    }
    return { t: this.t, moments };
  }

  /** Restores a state from `state()`; every moment must be present with the parameter's size. */
  restore(state: AdamWState): void {
    for (const p of this.params) {
      for (const [kind, store] of [
        ['m', this.m],
        ['v', this.v],
      ] as const) {
        const key = `${kind}.${p.name}`;
        const data = state.moments.get(key);
        if (!data) throw new Error(`optimizer state has no moment ${key}`);
        if (data.length !== p.variable.size) {
          throw new Error(`optimizer moment ${key} has ${data.length} values, parameter has ${p.variable.size}`);
        }
        const variable = store.get(p.name)!;
        tf.tidy(() => variable.assign(tf.tensor(data, p.variable.shape, 'float32')));
      }
    }
    this.t = state.t;
  }

  dispose(): void {
    for (const x of [...this.m.values(), ...this.v.values()]) x.dispose();
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

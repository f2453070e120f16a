import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/backend/backend';
import { fusedLibraryPath, fusedLibraryProblem } from '../../src/backend/fused_build';
import { FusedOps, loadFusedOps } from '../../src/backend/fused_ops';
import { fusedKernels } from '../../src/backend/fused_kernels';
import { backendKernels } from '../../src/backend/kernels';
import type { KernelSet } from '../../src/backend/kernel_set';
import { attentionBias, rotateHalfMatrix } from '../../src/model/layers';
import type { TokenBatch } from '../../src/data/batch';
import { AdamW } from '../../src/train/adamw';
import { applyGradients } from '../../src/train/optimizer';
import { Rng } from '../../src/util/rng';
import { randomIds, testConfig, testModel } from '../model/helpers';
import { nativeSkipReason } from './native';

/**
 * The fused kernels of native/ndbg_ops.cc against the unfused tfjs computation on the same
 * (tensorflow) backend: each op's values, each gradient op against tf.grad of the unfused
 * forward, AdamW against its tfjs formula, and a whole model's loss and gradients with the
 * fused kernel set built with the native ops and without them, side by side. Tolerance: 2e-6 relative to the largest value (float32
 * rounding of a different summation order); AdamW 1e-6 absolute on weights of size ~1.
 * Skipped with a printed reason when the tensorflow backend is not built here.
 */
// The library itself is checked once the backend is loaded (it is keyed by TF_Version): when
// the backend is built but the library is not, the tests fail rather than skip.
const skip = nativeSkipReason();
if (skip) {
  // eslint-disable-next-line no-console
  console.log(`skipped: the fused-op tests (${skip})`);
}

function maxRelDiff(a: tf.Tensor, b: tf.Tensor): number {
  expect(a.shape).toEqual(b.shape);
  return tf.tidy(() => tf.max(tf.abs(tf.sub(a, b))).dataSync()[0] / Math.max(1e-30, tf.max(tf.abs(b)).dataSync()[0]));
}

const TOL = 2e-6;

(skip ? describe.skip : describe)('fused TensorFlow ops', () => {
  let F: FusedOps;
  const rng = Rng.from(7, 'fused-test');
  const rand = (shape: number[], scale = 1) => tf.tensor(Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal() * scale), shape);

  beforeAll(async () => {
    await initBackend('tensorflow', () => undefined);
    const version = (tf.backend() as unknown as { binding: { TF_Version: string } }).binding.TF_Version;
    const problem = fusedLibraryProblem(version);
    if (problem) throw new Error(`fused ops ${problem}`);
    const ops = loadFusedOps();
    if (!ops) throw new Error('loadFusedOps() is undefined on tensorflow with the library built');
    F = ops;
    // The set chosen at backend start is the native one (NDBG_FUSED unset).
    if (process.env.NDBG_FUSED !== '0') expect(backendKernels().native).toBe(F);
  });

  it('RMSNorm forward and backward', () => {
    tf.tidy(() => {
      const x = rand([37, 48], 3);
      const g = rand([37, 48]);
      const [xhat, r] = F.rmsNorm(x, 1e-5);
      const refR = tf.rsqrt(tf.add(tf.mean(tf.square(x), -1, true), 1e-5));
      expect(maxRelDiff(r, refR)).toBeLessThan(TOL);
      expect(maxRelDiff(xhat, tf.mul(x, refR))).toBeLessThan(TOL);
      const ref = tf.grad((xi: tf.Tensor) => tf.sum(tf.mul(tf.mul(xi, tf.rsqrt(tf.add(tf.mean(tf.square(xi), -1, true), 1e-5))), g)))(x);
      expect(maxRelDiff(F.rmsNormGrad(g, xhat, r), ref)).toBeLessThan(TOL);
    });
  });

  it('SwiGLU forward and backward', () => {
    tf.tidy(() => {
      const g = rand([50, 333], 4); // not a multiple of the kernel's chunk
      const u = rand([50, 333]);
      const dy = rand([50, 333]);
      const f = (gi: tf.Tensor, ui: tf.Tensor) => tf.mul(tf.mul(gi, tf.sigmoid(gi)), ui);
      expect(maxRelDiff(F.swiglu(g, u), f(g, u))).toBeLessThan(TOL);
      const [rg, ru] = tf.grads((gi: tf.Tensor, ui: tf.Tensor) => tf.sum(tf.mul(f(gi, ui), dy)))([g, u]);
      const [dg, du] = F.swigluGrad(dy, g, u);
      expect(maxRelDiff(dg, rg)).toBeLessThan(TOL);
      expect(maxRelDiff(du, ru)).toBeLessThan(TOL);
    });
  });

  it('packed SwiGLU on [g | u] equals SwiGLU of the halves, and so does its gradient', () => {
    tf.tidy(() => {
      // Within rounding, not bit for bit: Eigen vectorises a row of 333 differently from one
      // flat span, so the last bit of exp() can differ.
      const [g, u, dy] = [rand([50, 333], 4), rand([50, 333]), rand([50, 333])];
      const gu = tf.concat([g, u], 1) as tf.Tensor2D;
      expect(maxRelDiff(F.swigluPacked(gu), F.swiglu(g, u))).toBeLessThan(TOL);
      const [dg, du] = F.swigluGrad(dy, g, u);
      expect(maxRelDiff(F.swigluPackedGrad(dy, gu), tf.concat([dg, du], 1))).toBeLessThan(TOL);
      expect(() => F.swigluPacked(rand([4, 7]) as tf.Tensor2D)).toThrow(/\[N, 2·f\]/);
    });
  });

  it('RoPE and its inverse (the gradient)', () => {
    tf.tidy(() => {
      const [T, hd] = [7, 8];
      const x = rand([2, 3, T, hd]);
      const dy = rand([2, 3, T, hd]);
      const angles = rand([T, hd / 2]);
      const half = tf.concat([angles, angles], 1);
      const [cos, sin] = [tf.cos(half), tf.sin(half)];
      const rot = tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]);
      const f = (xi: tf.Tensor) => tf.add(tf.mul(xi, cos), tf.mul(tf.reshape(tf.matMul(tf.reshape(xi, [-1, hd]), rot), xi.shape), sin));
      expect(maxRelDiff(F.rope(x, cos, sin, false), f(x))).toBeLessThan(TOL);
      const ref = tf.grad((xi: tf.Tensor) => tf.sum(tf.mul(f(xi), dy)))(x);
      expect(maxRelDiff(F.rope(dy, cos, sin, true), ref)).toBeLessThan(TOL);
    });
  });

  it('the q/k/v head layout with RoPE equals reshape, transpose and rope bit for bit, and so does its gradient', () => {
    tf.tidy(() => {
      // GQA (H 4, Hkv 2), two batch rows; the gradient is the transpose of the map.
      const [B, T, H, Hkv, hd] = [2, 9, 4, 2, 8];
      const blocks = H + 2 * Hkv;
      const y = rand([B * T, blocks * hd]);
      const dheads = rand([B, blocks, T, hd]);
      const angles = rand([T, hd / 2]);
      const half = tf.concat([angles, angles], 1);
      const [cos, sin] = [tf.cos(half), tf.sin(half)];
      const toHeads = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [B, T, blocks, hd]), [0, 2, 1, 3]);
      const unfused = (yi: tf.Tensor) => {
        const [qk, v] = tf.split(toHeads(yi), [H + Hkv, Hkv], 1);
        return tf.concat([F.rope(qk, cos, sin, false), v], 1);
      };
      const heads = F.qkvHeads(y, cos, sin, H, Hkv);
      expect(heads.shape).toEqual([B, blocks, T, hd]);
      expect(Array.from(heads.dataSync())).toEqual(Array.from(unfused(y).dataSync()));
      const [dqk, dv] = tf.split(dheads, [H + Hkv, Hkv], 1);
      const back = tf.reshape(tf.transpose(tf.concat([F.rope(dqk, cos, sin, true), dv], 1), [0, 2, 1, 3]), [B * T, blocks * hd]);
      const dy = F.qkvHeadsGrad(dheads, cos, sin, H, Hkv);
      expect(Array.from(dy.dataSync())).toEqual(Array.from(back.dataSync()));
      // The rotation really is applied (q/k heads differ from the plain layout; v heads do not).
      const plain = toHeads(y);
      expect(maxRelDiff(tf.slice(heads, [0, 0, 1, 0], [B, H + Hkv, T - 1, hd]), tf.slice(plain, [0, 0, 1, 0], [B, H + Hkv, T - 1, hd]))).toBeGreaterThan(1e-3);
      expect(maxRelDiff(tf.slice(heads, [0, H + Hkv, 0, 0], [B, Hkv, T, hd]), tf.slice(plain, [0, H + Hkv, 0, 0], [B, Hkv, T, hd]))).toBe(0);
      expect(() => F.qkvHeads(tf.slice(y, [0, 0], [B * T, blocks * hd - 2]), cos, sin, H, Hkv)).toThrow(/NdbgQkvHeads/);
    });
  });

  it('causal attention forward and backward (GQA, a per-batch bias, a KV-cache offset)', () => {
    tf.tidy(() => {
      // g = 2 query heads per kv head; T = 70 > one row tile of the kernel; S − T = 5 cached keys.
      const [B, H, Hkv, T, S, hd] = [2, 4, 2, 70, 75, 8];
      const g = H / Hkv;
      const q = rand([B, H, T, hd]);
      const k = rand([B, Hkv, S, hd]);
      const v = rand([B, Hkv, S, hd]);
      const dout = rand([B * T, H * hd]);
      // Causal at offset S − T plus a random extra mask per batch row (a document mask's role).
      const causal = Float32Array.from({ length: B * g * T * S }, (_, i) => {
        const j = i % S;
        const t = Math.floor(i / S) % T;
        return j > t + (S - T) || (j < t && (i * 7919) % 5 === 0) ? -1e9 : 0;
      });
      const bias = tf.tensor4d(causal, [B, 1, g * T, S]);
      const f = (qi: tf.Tensor, ki: tf.Tensor, vi: tf.Tensor) => {
        const probs = tf.softmax(tf.add(tf.matMul(tf.reshape(qi, [B, Hkv, g * T, hd]), ki, false, true), bias));
        const o = tf.reshape(tf.matMul(probs, vi), [B, H, T, hd]);
        return tf.reshape(tf.transpose(o, [0, 2, 1, 3]), [B * T, H * hd]);
      };
      const [out, p] = F.attention(q, k, v, bias);
      expect(maxRelDiff(out, f(q, k, v))).toBeLessThan(TOL);
      expect(p.shape).toEqual([B, Hkv, g * T, S]);
      const ref = tf.grads((qi: tf.Tensor, ki: tf.Tensor, vi: tf.Tensor) => tf.sum(tf.mul(f(qi, ki, vi), dout)))([q, k, v]);
      F.attentionGrad(dout, q, k, v, p).forEach((d, i) => expect(maxRelDiff(d, ref[i])).toBeLessThan(1e-5));
    });
  });

  it('the document bias equals the unfused one exactly', () => {
    tf.tidy(() => {
      const docs = tf.tensor2d([0, 0, 1, 1, 1, 2, 7, 7, 7, 7, 3, 3], [2, 6], 'int32') as tf.Tensor2D;
      const causal = attentionBias(6, 6, 0, 1);
      for (const g of [1, 2]) {
        const fusedBias = fusedKernels(F).documentBias(docs, causal, g);
        expect(Array.from(fusedBias.dataSync())).toEqual(Array.from(fusedKernels(undefined).documentBias(docs, causal, g).dataSync()));
      }
    });
  });

  it('the head cross-entropy with its gradient', () => {
    tf.tidy(() => {
      const [N, V] = [9, 1000];
      const logits = rand([N, V], 5) as tf.Tensor2D;
      const targets = Int32Array.from({ length: N }, (_, i) => (i * 331) % V);
      const scale = Float32Array.from({ length: N }, (_, i) => (i % 3 === 0 ? 0 : 0.1 * i));
      const onehot = tf.oneHot(tf.tensor1d(targets, 'int32'), V);
      const f = (x: tf.Tensor) => tf.sum(tf.mul(tf.sum(tf.mul(tf.neg(tf.logSoftmax(x)), onehot), 1), tf.tensor1d(scale)));
      const [loss, grad] = F.softmaxXent(logits, tf.tensor1d(targets, 'int32'), tf.tensor1d(scale));
      expect(Math.abs(loss.dataSync()[0] - f(logits).dataSync()[0])).toBeLessThan(1e-5 * Math.abs(f(logits).dataSync()[0]));
      expect(maxRelDiff(grad, tf.grad(f)(logits))).toBeLessThan(TOL);
    });
  });

  it('AdamW over a list of parameters', () => {
    tf.tidy(() => {
      const params = [rand([5, 7]), rand([300]), rand([4, 1000])];
      const total = params.reduce((a, p) => a + p.size, 0);
      const [m, v, g] = [rand([total], 0.1), tf.abs(rand([total], 0.01)), rand([total])];
      const c = [0.9, 0.05, 0.95, 0.02, 3e-3, 1e-8, 0.999];
      const gs = tf.split(g, params.map((p) => p.size)).map((x, i) => tf.reshape(x, params[i].shape));
      const out = F.adamW(params, m, v, gs, tf.tensor1d(c));
      const mNew = tf.add(tf.mul(m, c[0]), tf.mul(g, c[1]));
      const vNew = tf.add(tf.mul(v, c[2]), tf.mul(tf.square(g), c[3]));
      const next = tf.sub(tf.mul(tf.concat(params.map((p) => tf.reshape(p, [-1]))), c[6]), tf.div(tf.mul(mNew, c[4]), tf.add(tf.sqrt(vNew), c[5])));
      const flatOut = tf.concat(out.slice(0, 3).map((p) => tf.reshape(p, [-1])));
      out.slice(0, 3).forEach((p, i) => expect(p.shape).toEqual(params[i].shape));
      expect(tf.max(tf.abs(tf.sub(flatOut, next))).dataSync()[0]).toBeLessThan(1e-6);
      expect(maxRelDiff(out[3], mNew)).toBeLessThan(TOL);
      expect(maxRelDiff(out[4], vNew)).toBeLessThan(TOL);
    });
  });

  it('the sum of squares over a list of tensors', () => {
    tf.tidy(() => {
      const xs = [rand([5, 7]), rand([10000]), rand([1])];
      const ref = tf.addN(xs.map((x) => tf.sum(tf.square(x)))).dataSync()[0];
      expect(Math.abs(F.sumSquares(xs).dataSync()[0] - ref)).toBeLessThan(1e-6 * ref);
    });
  });

  it.each([true, false])('a model gives the same loss and gradients with the native ops and without (GQA, document mask, tied head: %s)', (tied) => {
    const config = testConfig({ tie_embeddings: tied, doc_attention_mask: true });
    const model = testModel(config, 3, fusedKernels(F));
    const plainModel = testModel(config, 3, fusedKernels(undefined));
    const B = 2;
    const T = config.max_seq_len;
    const rows = randomIds(Rng.from(5, 'rows'), B, T + 1, config.vocab_size);
    const ids = new Int32Array(B * (T + 1));
    rows.forEach((r, b) => ids.set(r, b * (T + 1)));
    const lossMask = Uint8Array.from(ids, (_, i) => (i % (T + 1) === 0 || i % 5 === 2 ? 0 : 1));
    const docIds = Int32Array.from(ids, (_, i) => ((i % (T + 1)) < 6 ? 0 : 1));
    const batch: TokenBatch = { batchSize: B, seqLen: T, ids, lossMask, docIds };
    const fused = model.lossAndGrads(batch);
    const plain = plainModel.lossAndGrads(batch);
    expect(Math.abs(fused.loss.dataSync()[0] - plain.loss.dataSync()[0])).toBeLessThan(1e-5);
    for (const [name, g] of fused.grads) expect([name, maxRelDiff(g, plain.grads.get(name) as tf.Tensor) < 1e-4]).toEqual([name, true]);
    for (const r of [fused, plain]) {
      r.loss.dispose();
      for (const g of r.grads.values()) g.dispose();
    }
    model.dispose();
    plainModel.dispose();
  });

  it('AdamW.apply gives the same weights with the native ops and without', () => {
    const make = (kernels: KernelSet) => {
      const vars = [tf.variable(tf.tensor2d([[1, -2], [3, 0.5]])), tf.variable(tf.tensor1d([0.1, -0.2, 0.3]))];
      const opt = new AdamW(
        vars.map((variable, i) => ({ name: `p${i}`, variable, decay: i === 0 })),
        { beta1: 0.9, beta2: 0.95, eps: 1e-8, weightDecay: 0.1 },
        kernels,
      );
      return { vars, opt };
    };
    const grads = () => new Map([['p0', tf.tensor2d([[0.5, -1], [2, 0]])], ['p1', tf.tensor1d([1, 0, -3])]]);
    const steps = (o: ReturnType<typeof make>) => {
      for (let s = 0; s < 3; s++) {
        const g = grads();
        applyGradients(o.opt, g, 1e-2, 0.5);
        for (const t of g.values()) t.dispose();
      }
      return o.vars.map((v) => Array.from(v.dataSync()));
    };
    const fusedRun = make(fusedKernels(F));
    const fusedW = steps(fusedRun);
    const plainRun = make(fusedKernels(undefined));
    const plainW = steps(plainRun);
    fusedW.flat().forEach((w, i) => expect(Math.abs(w - plainW.flat()[i])).toBeLessThan(1e-6));
    expect(fusedRun.opt.state().moments).toEqual(plainRun.opt.state().moments);
    for (const o of [fusedRun, plainRun]) {
      o.opt.dispose();
      for (const v of o.vars) v.dispose();
    }
  });
});

describe('the fused-op library lookup', () => {
  const saved = process.env.NDBG_CACHE;
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-fused-'));
    process.env.NDBG_CACHE = tmp;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.NDBG_CACHE;
    else process.env.NDBG_CACHE = saved;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('says how to build it when it is absent', () => {
    expect(fusedLibraryProblem('9.9.9')).toBe('not built for TensorFlow 9.9.9 (run `ndbg backend install`)');
  });

  it('refuses a library built from another source', () => {
    const { lib, stamp } = fusedLibraryPath('9.9.9');
    fs.mkdirSync(path.dirname(lib), { recursive: true });
    fs.writeFileSync(lib, '');
    fs.writeFileSync(stamp, JSON.stringify({ source: '0000', framework: '/x' }));
    expect(fusedLibraryProblem('9.9.9')).toMatch(/^built from another version of native\/ndbg_ops.cc/);
  });
});

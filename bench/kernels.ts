import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs-core';
import { BackendChoice, initBackend } from '../src/backend/backend';
import { loadFusedOps } from '../src/backend/fused_ops';
import { fusedKernels } from '../src/backend/fused_kernels';
import type { KernelSet } from '../src/backend/kernel_set';
import { loadModelConfig, headDim, ModelConfig } from '../src/model/config';
import { attentionBias, REFERENCE_KERNELS, ropeTables, rotateHalfMatrix } from '../src/model/layers';
import { packageRoot } from '../src/util/paths';
import { Rng } from '../src/util/rng';
import { flagValue, intFlag } from './flags';

/**
 * `npm run bench -- kernels [--backend=tensorflow] [--reps=5] [--configs=quickstart,tiny]`:
 * each block of the kernel sets (src/backend/kernel_set.ts) timed forward and backward on a
 * config's training shapes (B = micro_batch_size rows of T = max_seq_len): the reference set
 * (src/model/layers.ts, plain tfjs), the fused set's tfjs form and, on tensorflow with the
 * native library, its native form. ms per call is the median of `reps` timed calls after one
 * warm-up; speedup is reference / fused. The numbers the kernels' comments point to.
 */
type Variant = { name: string; kernels: KernelSet };
type Case = { op: string; inputs: tf.Tensor[]; fn: (k: KernelSet, xs: tf.Tensor[]) => tf.Tensor };

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const backend = (flagValue(args, 'backend') ?? 'tensorflow') as BackendChoice;
  const reps = intFlag(args, 'reps', 5);
  const configs = (flagValue(args, 'configs') ?? 'quickstart,tiny').split(',');
  const info = await initBackend(backend);
  const native = loadFusedOps();
  const variants: Variant[] = [
    { name: 'reference', kernels: REFERENCE_KERNELS },
    { name: 'fused-tfjs', kernels: fusedKernels(undefined) },
    ...(native ? [{ name: 'fused-native', kernels: fusedKernels(native) }] : []),
  ];
  const shapes: Record<string, unknown>[] = [];
  for (const name of configs) {
    const config = loadModelConfig(path.join(packageRoot(), 'configs', `${name}.json`));
    const B = microBatch(name);
    const rows = cases(config, B).map((c) => timeCase(c, variants, reps));
    shapes.push({ config: name, B, T: config.max_seq_len, d: config.d_model, heads: config.n_heads, d_ff: config.d_ff, V: config.vocab_size, ops: rows });
    process.stderr.write(`${name}: ${rows.map((r) => `${r.op} ${JSON.stringify(r.ms)}`).join('; ')}\n`);
  }
  return { backend: info.choice, backendDetail: info.detail, isa: cpuIsa(), reps, timing: 'forward + backward (values and input gradients), median ms per call', shapes };
}

/** The config file's train.micro_batch_size (the rows of one step's forward). */
function microBatch(name: string): number {
  const raw = JSON.parse(fs.readFileSync(path.join(packageRoot(), 'configs', `${name}.json`), 'utf8')) as { train?: { micro_batch_size?: number } };
  return raw.train?.micro_batch_size ?? 4;
}

/** The SIMD extensions the CPU reports (what native/ndbg_ops.cc and Eigen can use). */
function cpuIsa(): string[] {
  try {
    const flags = fs.readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1].trim().split(/\s+/) ?? [];
    return ['sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512_vnni', 'avx512_bf16', 'amx_tile'].filter((f) => flags.includes(f));
  } catch {
    return [];
  }
}

/** The blocks with inputs of one training forward's shapes; the backward is that of the output's sum. */
function cases(c: ModelConfig, B: number): Case[] {
  const T = c.max_seq_len;
  const hd = headDim(c);
  const heads = { B, T, H: c.n_heads, Hkv: c.n_kv_heads, hd };
  const g = c.n_heads / c.n_kv_heads;
  const N = B * T;
  const rng = Rng.from(0, 'bench-kernels');
  const rand = (shape: number[], scale = 1) => tf.tensor(Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal() * scale), shape);
  const t = ropeTables(T, hd, c.rope_theta);
  const rope = { cos: tf.tensor2d(t.cos, [T, hd]), sin: tf.tensor2d(t.sin, [T, hd]), rot: tf.tensor2d(rotateHalfMatrix(hd), [hd, hd]) };
  const causal = attentionBias(T, T, 0, 1);
  const docIds = tf.tensor2d(Int32Array.from({ length: N }, (_, i) => Math.floor((i % T) / 100)), [B, T], 'int32');
  const bias = REFERENCE_KERNELS.documentBias(docIds, causal, g);
  const targets = Int32Array.from({ length: N }, (_, i) => (i * 7919) % c.vocab_size);
  const weights = new Float32Array(N).fill(1);
  const [d, f] = [c.d_model, c.d_ff];
  const proj = (o: number) => rand([d, o], 0.02);
  return [
    { op: 'rmsNorm', inputs: [rand([N, d]), tf.onesLike(rand([d]))], fn: (k, [x, w]) => k.rmsNorm(x as tf.Tensor2D, w, c.norm_eps) },
    { op: 'qkv', inputs: [rand([N, d]), tf.onesLike(rand([d])), proj(d), proj(c.n_kv_heads * hd), proj(c.n_kv_heads * hd)], fn: (k, [x, norm, q, kk, v]) => qkvOut(k, x, norm, q, kk, v, heads, rope, c.norm_eps) },
    { op: 'attention', inputs: [rand([B, c.n_heads, T, hd]), rand([B, c.n_kv_heads, T, hd]), rand([B, c.n_kv_heads, T, hd])], fn: (k, [q, kk, v]) => k.attention(q as tf.Tensor4D, kk as tf.Tensor4D, v as tf.Tensor4D, bias) },
    { op: 'mlp', inputs: [rand([N, d]), tf.onesLike(rand([d])), proj(f), proj(f), rand([f, d], 0.02)], fn: (k, [x, norm, gate, up, down]) => k.mlp(x as tf.Tensor2D, { norm, gate: gate as tf.Tensor2D, up: up as tf.Tensor2D, down: down as tf.Tensor2D }, c.norm_eps) },
    { op: 'headCrossEntropy', inputs: [rand([N, d]), rand([c.vocab_size, d], 0.02)], fn: (k, [h, w]) => k.headCrossEntropy(h as tf.Tensor2D, w as tf.Tensor2D, true, targets, weights, 'mean') },
  ];
}

/** q, k and v of the set's qkv, concatenated flat (one output to differentiate). */
function qkvOut(k: KernelSet, x: tf.Tensor, norm: tf.Tensor, q: tf.Tensor, kk: tf.Tensor, v: tf.Tensor, heads: Parameters<KernelSet['qkv']>[2], rope: Parameters<KernelSet['qkv']>[3], eps: number): tf.Tensor {
  const out = k.qkv(x as tf.Tensor2D, { norm, q: q as tf.Tensor2D, k: kk as tf.Tensor2D, v: v as tf.Tensor2D }, heads, rope, eps);
  return tf.concat([tf.reshape(out.q, [-1]), tf.reshape(out.k, [-1]), tf.reshape(out.v, [-1])]);
}

/** Median ms of forward + backward for each variant, and the speed-ups over the reference. */
function timeCase(c: Case, variants: Variant[], reps: number): { op: string; ms: Record<string, number>; speedup: Record<string, number> } {
  const ms: Record<string, number> = {};
  for (const v of variants) {
    const once = () => {
      const start = performance.now();
      tf.tidy(() => {
        const grads = tf.grads((...xs: tf.Tensor[]) => tf.sum(c.fn(v.kernels, xs)))(c.inputs);
        for (const g of grads) g.dataSync();
      });
      return performance.now() - start;
    };
    once();
    const times = Array.from({ length: reps }, once).sort((a, b) => a - b);
    ms[v.name] = Number(times[Math.floor(reps / 2)].toFixed(3));
  }
  const speedup: Record<string, number> = {};
  for (const v of variants.slice(1)) speedup[v.name] = Number((ms.reference / ms[v.name]).toFixed(2));
  return { op: c.op, ms, speedup };
}

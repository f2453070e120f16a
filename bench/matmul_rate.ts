import * as tf from '@tensorflow/tfjs-core';
import { headDim, type ModelConfig } from '../src/model/config';

/** One 2-D product [m, k] × [k, n] (transposeB: the right operand stored [n, k], as the tied head's). */
export interface Product {
  name: string;
  m: number;
  k: number;
  n: number;
  transposeB?: boolean;
}

/**
 * The forward 2-D products of one training step at micro-batch `batch`, as ndbg runs them
 * (src/model/model.ts, src/backend/fused_kernels.ts): per layer one fused q/k/v product, o_proj,
 * gate and up (separate), down; then the output head (against the embedding, transposed, when
 * tied). bench/torch_ref_train.py's products() lists the same. The backward products are these
 * with an operand transposed; they are not timed.
 */
export function shapeProducts(c: ModelConfig, batch: number): Product[] {
  const n = batch * c.max_seq_len;
  const hd = headDim(c);
  const layer: Product[] = [
    { name: 'qkv', m: n, k: c.d_model, n: (c.n_heads + 2 * c.n_kv_heads) * hd },
    { name: 'o_proj', m: n, k: c.n_heads * hd, n: c.d_model },
    { name: 'gate', m: n, k: c.d_model, n: c.d_ff },
    { name: 'up', m: n, k: c.d_model, n: c.d_ff },
    { name: 'down', m: n, k: c.d_ff, n: c.d_model },
  ];
  const out: Product[] = [];
  for (let i = 0; i < c.n_layers; i++) out.push(...layer);
  out.push({ name: 'head', m: n, k: c.d_model, n: c.vocab_size, transposeB: c.tie_embeddings });
  return out;
}

export function productFlops(ps: readonly Product[]): number {
  return ps.reduce((s, p) => s + 2 * p.m * p.k * p.n, 0);
}

/** The 1024³ product every backend has been compared on (bench/results history). */
export const CUBE_1024: Product[] = [{ name: '1024³', m: 1024, k: 1024, n: 1024 }];

/**
 * GFLOP/s of `tf.matMul` on the current backend over the products: their FLOPs over the sum of
 * each product's fastest time of `reps` (after one untimed run), i.e. the rate a step made only of
 * these products would reach. The fastest, not the median: on a shared machine other jobs only
 * ever slow a product down, and this is the rate the step is measured against. Identical
 * products are timed once. Reading one element of each result
 * makes an asynchronous backend (a GPU) finish the product inside the timing, at the cost of one
 * tiny op; on the CPU backends ops already run synchronously.
 */
export function tfMatmulGflops(ps: readonly Product[], reps = 5): number {
  const seconds = new Map<string, number>();
  let total = 0;
  for (const p of ps) {
    const key = `${p.m}x${p.k}x${p.n}${p.transposeB ? 'T' : ''}`;
    if (!seconds.has(key)) seconds.set(key, timeProduct(p, reps));
    total += seconds.get(key)!;
  }
  return productFlops(ps) / total / 1e9;
}

function timeProduct(p: Product, reps: number): number {
  const a = tf.randomNormal([p.m, p.k], 0, 1, 'float32', 1);
  const b = tf.randomNormal(p.transposeB ? [p.n, p.k] : [p.k, p.n], 0, 1, 'float32', 2);
  const times: number[] = [];
  for (let i = 0; i <= reps; i++) {
    const t0 = performance.now();
    const c = tf.matMul(a, b, false, p.transposeB ?? false);
    const corner = tf.slice(c, [0, 0], [1, 1]);
    corner.dataSync();
    if (i > 0) times.push((performance.now() - t0) / 1000);
    tf.dispose([c, corner]);
  }
  tf.dispose([a, b]);
  return Math.min(...times);
}

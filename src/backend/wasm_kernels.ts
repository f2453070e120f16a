import * as tf from '@tensorflow/tfjs-core';

/**
 * Kernels that make training work and run fast on the tfjs wasm backend (4.22):
 *
 * - UnsortedSegmentSum: missing from wasm; it is the gradient of tf.gather (the embedding and
 *   the cross-entropy target pick). Implemented as a scatter-add in JS directly on the wasm heap
 *   (one pass over the input, no dense one-hot), so it costs O(input size).
 * - BatchMatMul: stock wasm runs XNNPACK only for untransposed operands with batch 1; transposed
 *   or batched products (every backward matmul, all of attention) fall to a naive loop at
 *   ~2 GFLOP/s. The replacement makes each operand untransposed with the wasm Transpose kernel,
 *   folds a broadcast batch of 1 on the right into the rows of the left operand, and otherwise
 *   runs the fast 2-D path once per batch slice.
 *
 * Kernels are registered once per process; they must be registered before the wasm backend is
 * initialised (setupFunc runs at initialisation), or setup is run here if it already is.
 */

interface WasmBackendLike {
  makeOutput(shape: number[], dtype: tf.DataType, memoryOffset?: number): tf.TensorInfo;
  typedArrayFromHeap(t: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
  disposeData(dataId: tf.DataId, force?: boolean): boolean;
}

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: WasmBackendLike; attrs: Record<string, unknown> };
type Kernel = (args: KernelArgs) => tf.TensorInfo;

let registered = false;

export function registerWasmKernels(): void {
  if (registered) return;
  registered = true;
  const original = tf.getKernel(tf.BatchMatMul, 'wasm');
  const transpose = tf.getKernel(tf.Transpose, 'wasm');
  if (!original || !transpose) throw new Error('tfjs wasm kernels are not registered; import @tensorflow/tfjs-backend-wasm first');
  const origFunc = original.kernelFunc as unknown as Kernel;
  const transposeFunc = transpose.kernelFunc as unknown as Kernel;

  tf.unregisterKernel(tf.BatchMatMul, 'wasm');
  tf.registerKernel({
    kernelName: tf.BatchMatMul,
    backendName: 'wasm',
    setupFunc: original.setupFunc,
    kernelFunc: ((args: KernelArgs) => fastBatchMatMul(args, origFunc, transposeFunc)) as unknown as tf.KernelFunc,
  });
  if (!tf.getKernel(tf.UnsortedSegmentSum, 'wasm')) {
    tf.registerKernel({
      kernelName: tf.UnsortedSegmentSum,
      backendName: 'wasm',
      kernelFunc: unsortedSegmentSum as unknown as tf.KernelFunc,
    });
  }
  // If the backend already exists its kernels were set up without ours: set up now.
  const existing = tf.engine().registry.wasm as unknown as WasmBackendLike | undefined;
  if (existing && original.setupFunc) original.setupFunc(existing as unknown as tf.KernelBackend);
}

function size(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

function fastBatchMatMul(args: KernelArgs, origFunc: Kernel, transposeFunc: Kernel): tf.TensorInfo {
  const { backend } = args;
  let a = args.inputs.a;
  let b = args.inputs.b;
  const { transposeA, transposeB } = args.attrs as { transposeA: boolean; transposeB: boolean };
  if (a.dtype !== 'float32' || b.dtype !== 'float32') return origFunc(args);
  const temps: tf.TensorInfo[] = [];
  const swapLast = (t: tf.TensorInfo) => {
    const out = transposeLast2(t, backend);
    temps.push(out);
    return out;
  };
  try {
    const sizeA = size(a.shape);
    const sizeB = size(b.shape);
    const batchOf = (t: tf.TensorInfo) => size(t.shape.slice(0, -2));
    if ((transposeA || transposeB) && batchOf(a) === batchOf(b) && a.shape.length === b.shape.length) {
      // op(A)·op(B) = (op(B)ᵀ·op(A)ᵀ)ᵀ: computing the swapped product moves the transposes to
      // the other operands and the output; pick whichever copies fewer elements.
      const M = transposeA ? a.shape[a.shape.length - 1] : a.shape[a.shape.length - 2];
      const N = transposeB ? b.shape[b.shape.length - 2] : b.shape[b.shape.length - 1];
      // Costs in elements copied: explicit transposes, plus XNNPACK packing the right operand.
      const direct = (transposeA ? sizeA : 0) + (transposeB ? sizeB : 0) + sizeB;
      const swapped = (transposeA ? 0 : sizeA) + (transposeB ? 0 : sizeB) + batchOf(a) * M * N + sizeA;
      if (swapped < direct) {
        const outT = fastBatchMatMul({ inputs: { a: b, b: a }, backend, attrs: { transposeA: !transposeB, transposeB: !transposeA } }, origFunc, transposeFunc);
        temps.push(outT);
        const out = swapLast(outT);
        temps.pop(); // the result is returned, not a temp
        return out;
      }
    }
    if (transposeA) a = swapLast(a);
    if (transposeB) b = swapLast(b);
    const M = a.shape[a.shape.length - 2];
    const K = a.shape[a.shape.length - 1];
    const N = b.shape[b.shape.length - 1];
    const outerA = a.shape.slice(0, -2);
    const outerB = b.shape.slice(0, -2);
    const batchA = size(outerA);
    const batchB = size(outerB);
    const outOuter = tf.backend_util.assertAndGetBroadcastShape(outerA, outerB);
    const outShape = [...outOuter, M, N];
    const plain = { transposeA: false, transposeB: false };
    if (batchB === 1) {
      // Weights shared across the batch: one [batchA·M, K] × [K, N] product.
      const a3 = { ...a, shape: [1, batchA * M, K] };
      const b3 = { ...b, shape: [1, K, N] };
      const out = origFunc({ inputs: { a: a3, b: b3 }, backend, attrs: plain });
      return { ...out, shape: outShape };
    }
    const batch = size(outOuter);
    const sameOrOne = (n: number) => n === batch || n === 1;
    if (!sameOrOne(batchA) || !sameOrOne(batchB) || outerA.length !== outerB.length && batchA !== 1) {
      return origFunc({ inputs: { a, b }, backend, attrs: plain });
    }
    const out = backend.makeOutput([batch, M, N], 'float32');
    const sa = backend.makeOutput([1, M, K], 'float32');
    try {
      for (let i = 0; i < batch; i++) {
        const ia = batchA === 1 ? 0 : i;
        // XNNPACK caches packed weights by the right operand's tensor id, so each slice of b gets
        // a fresh tensor (reusing one would silently multiply by the first slice's weights).
        const sb = backend.makeOutput([1, K, N], 'float32');
        // Heap views must be re-taken after any allocation: wasm memory growth detaches them.
        (backend.typedArrayFromHeap(sa) as Float32Array).set((backend.typedArrayFromHeap(a) as Float32Array).subarray(ia * M * K, (ia + 1) * M * K));
        (backend.typedArrayFromHeap(sb) as Float32Array).set((backend.typedArrayFromHeap(b) as Float32Array).subarray(i * K * N, (i + 1) * K * N));
        const r = origFunc({ inputs: { a: sa, b: sb }, backend, attrs: plain });
        (backend.typedArrayFromHeap(out) as Float32Array).set(backend.typedArrayFromHeap(r) as Float32Array, i * M * N);
        backend.disposeData(r.dataId);
        backend.disposeData(sb.dataId);
      }
    } finally {
      backend.disposeData(sa.dataId);
    }
    return { ...out, shape: outShape };
  } finally {
    for (const t of temps) backend.disposeData(t.dataId);
  }
}

/**
 * Swaps the last two axes with a cache-blocked loop over the wasm heap: ~3× faster than the
 * wasm Transpose kernel on the [N, V] logit gradients, which dominate the transposes here.
 */
function transposeLast2(t: tf.TensorInfo, backend: WasmBackendLike): tf.TensorInfo {
  const r = t.shape.length;
  const R = t.shape[r - 2];
  const C = t.shape[r - 1];
  const batch = size(t.shape.slice(0, -2));
  const out = backend.makeOutput([...t.shape.slice(0, -2), C, R], 'float32');
  const src = backend.typedArrayFromHeap(t) as Float32Array;
  const dst = backend.typedArrayFromHeap(out) as Float32Array;
  const B = 32;
  for (let b = 0; b < batch; b++) {
    const base = b * R * C;
    for (let i0 = 0; i0 < R; i0 += B) {
      const i1 = Math.min(i0 + B, R);
      for (let j0 = 0; j0 < C; j0 += B) {
        const j1 = Math.min(j0 + B, C);
        for (let i = i0; i < i1; i++) {
          const s = base + i * C;
          for (let j = j0; j < j1; j++) dst[base + j * R + i] = src[s + j];
        }
      }
    }
  }
  return out;
}

/** out[segmentIds[i], ...] += x[i, ...]; ids outside [0, numSegments) are dropped (as in TF). */
function unsortedSegmentSum(args: KernelArgs): tf.TensorInfo {
  const { backend } = args;
  const { x, segmentIds } = args.inputs;
  const numSegments = args.attrs.numSegments as number;
  const idsRank = segmentIds.shape.length;
  const inner = size(x.shape.slice(idsRank));
  const outShape = [numSegments, ...x.shape.slice(idsRank)];
  const out = backend.makeOutput(outShape, x.dtype);
  const o = backend.typedArrayFromHeap(out);
  o.fill(0);
  const xs = backend.typedArrayFromHeap(x);
  const ids = backend.typedArrayFromHeap(segmentIds);
  const n = size(segmentIds.shape);
  for (let i = 0; i < n; i++) {
    const s = ids[i];
    if (s < 0 || s >= numSegments) continue;
    const src = i * inner;
    const dst = s * inner;
    for (let j = 0; j < inner; j++) o[dst + j] += xs[src + j];
  }
  return out;
}

import * as tf from '@tensorflow/tfjs-core';

/**
 * Gradients of the kernels the model differentiates through.
 *
 * Why this file exists: @tensorflow/tfjs-core registers no gradients by itself; the union
 * package @tensorflow/tfjs does it with an ES-module side-effect import that CommonJS code
 * cannot load (the CJS bundle tf-core.node.js does not contain them). So ndbg registers the
 * ones it needs, following the tfjs-core definitions (Apache-2.0). The union package, when
 * tfjs-node loads it, registers its own; registerGradients() puts ndbg's back (see there).
 */
type Saved = tf.Tensor[];
type Attrs = Record<string, unknown>;
type GradFn = (dy: tf.Tensor, saved: Saved, attrs: Attrs) => Record<string, () => tf.Tensor>;

/** Sums a broadcast gradient back to the input's shape. */
function unbroadcast(g: tf.Tensor, shape: number[]): tf.Tensor {
  const axes = tf.broadcast_util.getReductionAxes(shape, g.shape);
  const r = axes.length ? tf.sum(g, axes) : g;
  if (!tf.util.arraysEqual(r.shape, shape)) return tf.reshape(r, shape);
  // A reshape to the same shape is a TensorFlow op on the native backend; a clone shares the
  // data for free. A new tensor either way: backprop may dispose one input's gradient while
  // another input still holds it (Add passes dy to both).
  return r === g ? tf.clone(g) : r;
}

/** Reduces a batched matmul gradient to the operand's (possibly broadcast) shape. */
function toShape(g: tf.Tensor, shape: number[]): tf.Tensor {
  if (g.rank > shape.length) g = tf.sum(g, [...Array(g.rank - shape.length).keys()]);
  return unbroadcast(g, shape);
}

const binary = (da: (dy: tf.Tensor, a: tf.Tensor, b: tf.Tensor) => tf.Tensor, db: (dy: tf.Tensor, a: tf.Tensor, b: tf.Tensor) => tf.Tensor): GradFn => (dy, [a, b]) => ({
  a: () => unbroadcast(da(dy, a, b), a.shape),
  b: () => unbroadcast(db(dy, a, b), b.shape),
});

const GRADIENTS: Array<{ kernelName: string; inputsToSave?: string[]; outputsToSave?: boolean[]; saveAllInputs?: boolean; gradFunc: GradFn }> = [
  { kernelName: tf.Add, inputsToSave: ['a', 'b'], gradFunc: binary((dy) => dy, (dy) => dy) },
  { kernelName: tf.Sub, inputsToSave: ['a', 'b'], gradFunc: binary((dy) => dy, (dy) => tf.neg(dy)) },
  { kernelName: tf.Multiply, inputsToSave: ['a', 'b'], gradFunc: binary((dy, _a, b) => tf.mul(dy, b), (dy, a) => tf.mul(dy, a)) },
  { kernelName: tf.RealDiv, inputsToSave: ['a', 'b'], gradFunc: binary((dy, _a, b) => tf.div(dy, b), (dy, a, b) => tf.neg(tf.div(tf.mul(dy, a), tf.square(b)))) },
  { kernelName: tf.Neg, gradFunc: (dy) => ({ x: () => tf.neg(dy) }) },
  { kernelName: tf.Square, inputsToSave: ['x'], gradFunc: (dy, [x]) => ({ x: () => tf.mul(dy, tf.mul(x, 2)) }) },
  { kernelName: tf.Sqrt, inputsToSave: ['x'], gradFunc: (dy, [x]) => ({ x: () => tf.div(dy, tf.mul(tf.sqrt(x), 2)) }) },
  // d/dx x^-1/2 = -1/2 · y³ with y = rsqrt(x): uses the saved output, no pow.
  { kernelName: tf.Rsqrt, outputsToSave: [true], gradFunc: (dy, [y]) => ({ x: () => tf.mul(dy, tf.mul(tf.mul(y, tf.square(y)), -0.5)) }) },
  { kernelName: tf.Exp, outputsToSave: [true], gradFunc: (dy, [y]) => ({ x: () => tf.mul(dy, y) }) },
  { kernelName: tf.Log, inputsToSave: ['x'], gradFunc: (dy, [x]) => ({ x: () => tf.div(dy, x) }) },
  { kernelName: tf.Sigmoid, outputsToSave: [true], gradFunc: (dy, [y]) => ({ x: () => tf.mul(dy, tf.mul(y, tf.sub(1, y))) }) },
  {
    kernelName: tf.Softmax,
    outputsToSave: [true],
    gradFunc: (dy, [y], attrs) => ({
      logits: () => {
        const dyy = tf.mul(dy, y);
        return tf.sub(dyy, tf.mul(tf.sum(dyy, [attrs.dim as number], true), y));
      },
    }),
  },
  {
    kernelName: tf.Sum,
    inputsToSave: ['x'],
    gradFunc: (dy, [x], attrs) => ({ x: () => tf.mul(tf.reshape(dy, keptShape(x.shape, attrs.axis as number | number[])), tf.onesLike(x)) }),
  },
  {
    kernelName: tf.Mean,
    inputsToSave: ['x'],
    gradFunc: (dy, [x], attrs) => ({
      x: () => {
        const axes = tf.util.parseAxisParam(attrs.axis as number | number[], x.shape);
        const n = axes.reduce((p, a) => p * x.shape[a], 1);
        return tf.div(tf.mul(tf.reshape(dy, keptShape(x.shape, axes)), tf.onesLike(x)), n);
      },
    }),
  },
  { kernelName: tf.Reshape, inputsToSave: ['x'], gradFunc: (dy, [x]) => ({ x: () => tf.reshape(dy, x.shape) }) },
  {
    kernelName: tf.Transpose,
    gradFunc: (dy, _s, attrs) => {
      const perm = attrs.perm as number[];
      const undo = perm.map((_, i) => perm.indexOf(i));
      return { x: () => tf.transpose(dy, undo) };
    },
  },
  {
    kernelName: tf.SplitV,
    gradFunc: (dy, _s, attrs) => ({ x: () => tf.concat(dy as unknown as tf.Tensor[], attrs.axis as number) }),
  },
  {
    kernelName: tf.Concat,
    saveAllInputs: true,
    gradFunc: (dy, saved, attrs) => {
      const axis = tf.util.parseAxisParam(attrs.axis as number, saved[0].shape)[0];
      const parts = tf.split(dy, saved.map((t) => t.shape[axis]), axis);
      return Object.fromEntries(parts.map((p, i) => [String(i), () => p]));
    },
  },
  {
    kernelName: tf.GatherV2,
    inputsToSave: ['x', 'indices'],
    gradFunc: (dy, [x, indices], attrs) => {
      const axis = tf.util.parseAxisParam(attrs.axis as number, x.shape)[0];
      if (axis !== 0 || (attrs.batchDims as number) > 0) throw new Error('gather gradient: only axis 0 without batch dims is supported');
      return {
        x: () => tf.unsortedSegmentSum(tf.reshape(dy, [indices.size, ...x.shape.slice(1)]), tf.reshape(indices, [-1]) as tf.Tensor1D, x.shape[0]),
        indices: () => tf.zerosLike(indices),
      };
    },
  },
  {
    kernelName: tf.BatchMatMul,
    inputsToSave: ['a', 'b'],
    gradFunc: (dy, [a, b], attrs) => {
      const tA = attrs.transposeA as boolean;
      const tB = attrs.transposeB as boolean;
      const da = !tA ? (!tB ? () => tf.matMul(dy, b, false, true) : () => tf.matMul(dy, b)) : !tB ? () => tf.matMul(b, dy, false, true) : () => tf.matMul(b, dy, true, true);
      const db = !tB ? (!tA ? () => tf.matMul(a, dy, true, false) : () => tf.matMul(a, dy)) : !tA ? () => tf.matMul(dy, a, true, false) : () => tf.matMul(dy, a, true, true);
      return { a: () => toShape(da(), a.shape), b: () => toShape(db(), b.shape) };
    },
  },
];

function keptShape(shape: number[], axis: number | number[] | undefined): number[] {
  const axes = tf.util.parseAxisParam(axis ?? [...shape.keys()], shape);
  return shape.map((d, i) => (axes.includes(i) ? 1 : d));
}

/**
 * Registers ndbg's gradients, replacing any registered for the same kernels. Idempotent and
 * cheap, so it runs again after a backend package loads: @tensorflow/tfjs (pulled in by
 * tfjs-node) registers its own versions, and the model must differentiate the same way on every
 * backend (the parity tests compare them).
 */
export function registerGradients(): void {
  for (const g of GRADIENTS) {
    if (tf.getGradient(g.kernelName) !== (g as unknown as tf.GradConfig)) tf.registerGradient(g as unknown as tf.GradConfig);
  }
}

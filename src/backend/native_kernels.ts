import * as tf from '@tensorflow/tfjs-core';

/**
 * Kernels ndbg puts in place of tfjs-node's on the "tensorflow" backend (@tensorflow/tfjs-node
 * 4.22 with a TensorFlow 2.x C library). Same TensorFlow ops, less work around them:
 *
 * - BatchMatMul: tfjs-node runs every product as BatchMatMulV2, also for two rank-2 operands.
 *   For those TensorFlow's MatMul (transposes folded in the same way) is the same product and
 *   ran 20–40% faster at the model's shapes here ([2048,128]·[128,128]: 1.2 vs 1.7 ms).
 * - Reshape, Transpose, Sum, Max, Mean, Concat, SplitV, Tile: TensorFlow takes their shape,
 *   permutation or axes as an int32 tensor input, and tfjs-node builds a fresh tfjs tensor for
 *   it on every call (engine bookkeeping, an upload, a delete: ~200 per train step). Here they
 *   are TensorFlow handles created once per distinct value list and reused; they live outside
 *   the tfjs engine (tf.memory() does not count them). Mean also skips tfjs-node's Cast of an
 *   input that is already float32 (a full copy per call).
 *
 * Other dtypes than float32/int32/bool go to tfjs-node's own kernels. Registered once per
 * process, after the package registered its own (gradients are by kernel name: unchanged).
 */
interface NodeBinding {
  TF_ATTR_TYPE: number;
  TF_ATTR_BOOL: number;
  TF_ATTR_INT: number;
  TF_FLOAT: number;
  TF_INT32: number;
  TF_BOOL: number;
  createTensor(shape: number[], dtype: number, values: Int32Array): number;
  deleteTensor(id: number): void;
  executeOp(name: string, attrs: unknown[], inputs: number[], numOutputs: number): unknown[];
}

interface NodeBackendLike {
  binding: NodeBinding;
  getInputTensorIds(inputs: tf.TensorInfo[]): number[];
  createOutputTensor(metadata: unknown): tf.TensorInfo;
  executeSingleOutput(name: string, attrs: unknown[], inputs: tf.TensorInfo[]): tf.TensorInfo;
}

type KernelArgs = { inputs: Record<string, tf.TensorInfo> | tf.TensorInfo[]; backend: NodeBackendLike; attrs: Record<string, unknown> };
type Kernel = (args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[];

/** TensorFlow int32 handles by value list ("s" prefix: a scalar), kept for the process. */
const constants = new Map<string, number>();
/** Far above the few hundred distinct shapes a run uses; past it handles are made per call. */
const MAX_CONSTANTS = 4096;

/** An int32 constant input: a cached handle, or (past the bound) a temporary one run() deletes. */
type Constant = { id: number; temporary: boolean };

function int32Handle(bind: NodeBinding, values: number[], scalar = false): Constant {
  const key = `${scalar ? 's' : 'v'}${values.join(',')}`;
  const cached = constants.get(key);
  if (cached !== undefined) return { id: cached, temporary: false };
  const id = bind.createTensor(scalar ? [] : [values.length], bind.TF_INT32, Int32Array.from(values));
  if (constants.size >= MAX_CONSTANTS) return { id, temporary: true };
  constants.set(key, id);
  return { id, temporary: false };
}

/** Runs a TensorFlow op on tfjs inputs followed by int32 constant inputs. */
function run(backend: NodeBackendLike, op: string, attrs: unknown[], inputs: tf.TensorInfo[], consts: Constant[], numOutputs = 1): tf.TensorInfo[] {
  try {
    const ids = [...backend.getInputTensorIds(inputs), ...consts.map((c) => c.id)];
    return backend.binding.executeOp(op, attrs, ids, numOutputs).map((m) => backend.createOutputTensor(m));
  } finally {
    for (const c of consts) if (c.temporary) backend.binding.deleteTensor(c.id);
  }
}

function tfType(bind: NodeBinding, dtype: tf.DataType): number | undefined {
  return dtype === 'float32' ? bind.TF_FLOAT : dtype === 'int32' ? bind.TF_INT32 : dtype === 'bool' ? bind.TF_BOOL : undefined;
}

const typeAttr = (bind: NodeBinding, name: string, value: number) => ({ name, type: bind.TF_ATTR_TYPE, value });

function reduction(op: string, axisAttr: string): (args: KernelArgs, fallback: Kernel) => tf.TensorInfo | tf.TensorInfo[] {
  return (args, fallback) => {
    const { x } = args.inputs as Record<string, tf.TensorInfo>;
    const bind = args.backend.binding;
    const t = tfType(bind, x.dtype);
    if (t === undefined || (op === 'Mean' && x.dtype !== 'float32')) return fallback(args);
    const axes = tf.util.parseAxisParam(args.attrs[axisAttr] as number | number[], x.shape);
    const attrs = [{ name: 'keep_dims', type: bind.TF_ATTR_BOOL, value: Boolean(args.attrs.keepDims) }, typeAttr(bind, 'T', t), typeAttr(bind, 'Tidx', bind.TF_INT32)];
    return run(args.backend, op, attrs, [x], [int32Handle(bind, axes)])[0];
  };
}

/** One input x plus one int32 vector attribute (shape, permutation, multiples). */
function withVector(op: string, attr: string, typeName: string): (args: KernelArgs, fallback: Kernel) => tf.TensorInfo | tf.TensorInfo[] {
  return (args, fallback) => {
    const { x } = args.inputs as Record<string, tf.TensorInfo>;
    const bind = args.backend.binding;
    const t = tfType(bind, x.dtype);
    if (t === undefined) return fallback(args);
    const attrs = [typeAttr(bind, 'T', t), typeAttr(bind, typeName, bind.TF_INT32)];
    return run(args.backend, op, attrs, [x], [int32Handle(bind, args.attrs[attr] as number[])])[0];
  };
}

const OVERRIDES: Record<string, (args: KernelArgs, fallback: Kernel) => tf.TensorInfo | tf.TensorInfo[]> = {
  [tf.BatchMatMul]: (args, fallback) => {
    const { a, b } = args.inputs as Record<string, tf.TensorInfo>;
    if (a.shape.length !== 2 || b.shape.length !== 2 || a.dtype !== 'float32' || b.dtype !== 'float32') return fallback(args);
    const bind = args.backend.binding;
    const attrs = [
      typeAttr(bind, 'T', bind.TF_FLOAT),
      { name: 'transpose_a', type: bind.TF_ATTR_BOOL, value: Boolean(args.attrs.transposeA) },
      { name: 'transpose_b', type: bind.TF_ATTR_BOOL, value: Boolean(args.attrs.transposeB) },
    ];
    return args.backend.executeSingleOutput('MatMul', attrs, [a, b]);
  },
  [tf.Reshape]: withVector('Reshape', 'shape', 'Tshape'),
  [tf.Transpose]: withVector('Transpose', 'perm', 'Tperm'),
  [tf.Tile]: withVector('Tile', 'reps', 'Tmultiples'),
  [tf.Sum]: reduction('Sum', 'axis'),
  [tf.Mean]: reduction('Mean', 'axis'),
  [tf.Max]: reduction('Max', 'reductionIndices'),
  [tf.Concat]: (args, fallback) => {
    const tensors = args.inputs as tf.TensorInfo[];
    const bind = args.backend.binding;
    const t = tfType(bind, tensors[0].dtype);
    if (t === undefined) return fallback(args);
    const attrs = [{ name: 'N', type: bind.TF_ATTR_INT, value: tensors.length }, typeAttr(bind, 'Tidx', bind.TF_INT32), typeAttr(bind, 'T', t)];
    return run(args.backend, 'ConcatV2', attrs, Array.from(tensors), [int32Handle(bind, [args.attrs.axis as number], true)])[0];
  },
  [tf.SplitV]: (args, fallback) => {
    const { x } = args.inputs as Record<string, tf.TensorInfo>;
    const bind = args.backend.binding;
    const t = tfType(bind, x.dtype);
    if (t === undefined) return fallback(args);
    const axis = tf.util.parseAxisParam(args.attrs.axis as number, x.shape)[0];
    const sizes = tf.backend_util.prepareSplitSize(x as tf.Tensor, args.attrs.numOrSizeSplits as number | number[], axis);
    const attrs = [{ name: 'num_split', type: bind.TF_ATTR_INT, value: sizes.length }, typeAttr(bind, 'T', t), typeAttr(bind, 'Tlen', bind.TF_INT32)];
    return run(args.backend, 'SplitV', attrs, [x], [int32Handle(bind, sizes), int32Handle(bind, [axis], true)], sizes.length);
  },
};

let registered = false;

export function registerNativeKernels(): void {
  if (registered || !tf.getKernel(tf.BatchMatMul, 'tensorflow')) return;
  registered = true;
  for (const [name, kernel] of Object.entries(OVERRIDES)) {
    const original = tf.getKernel(name, 'tensorflow');
    if (!original) continue;
    const fallback = original.kernelFunc as unknown as Kernel;
    tf.unregisterKernel(name, 'tensorflow');
    tf.registerKernel({ kernelName: name, backendName: 'tensorflow', kernelFunc: ((args: KernelArgs) => kernel(args, fallback)) as unknown as tf.KernelFunc });
  }
}

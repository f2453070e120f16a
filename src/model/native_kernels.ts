import * as tf from '@tensorflow/tfjs-core';

/**
 * Kernels ndbg puts in place of tfjs-node's on the "tensorflow" backend (@tensorflow/tfjs-node
 * 4.22 with a TensorFlow 2.x C library).
 *
 * - BatchMatMul: tfjs-node runs every product as TensorFlow's BatchMatMulV2, also for two
 *   rank-2 operands. For those, TensorFlow's MatMul (transposes folded in the same way) is the
 *   same product and ran 20–40% faster at the model's shapes on this machine
 *   ([2048,128]·[128,128]: 1.2 vs 1.7 ms; the head [2048,128]·[128,2048]ᵀ likewise). Most of a
 *   train step's matmuls are rank 2 (projections, their gradients, the output head).
 *
 * Registered once per process, after the package registered its own kernels (the gradient is
 * the kernel name's, so the tape is unchanged).
 */
interface NodeBackendLike {
  binding: { TF_ATTR_TYPE: number; TF_ATTR_BOOL: number; TF_FLOAT: number };
  executeSingleOutput(name: string, attrs: unknown[], inputs: tf.TensorInfo[]): tf.TensorInfo;
}

type KernelArgs = { inputs: Record<string, tf.TensorInfo>; backend: NodeBackendLike; attrs: Record<string, unknown> };

let registered = false;

export function registerNativeKernels(): void {
  if (registered) return;
  const original = tf.getKernel(tf.BatchMatMul, 'tensorflow');
  if (!original) return;
  registered = true;
  tf.unregisterKernel(tf.BatchMatMul, 'tensorflow');
  tf.registerKernel({
    kernelName: tf.BatchMatMul,
    backendName: 'tensorflow',
    kernelFunc: ((args: KernelArgs) => {
      const { a, b } = args.inputs;
      if (a.shape.length !== 2 || b.shape.length !== 2 || a.dtype !== 'float32' || b.dtype !== 'float32') {
        return (original.kernelFunc as unknown as (x: KernelArgs) => tf.TensorInfo)(args);
      }
      const bind = args.backend.binding;
      const attrs = [
        { name: 'T', type: bind.TF_ATTR_TYPE, value: bind.TF_FLOAT },
        { name: 'transpose_a', type: bind.TF_ATTR_BOOL, value: Boolean(args.attrs.transposeA) },
        { name: 'transpose_b', type: bind.TF_ATTR_BOOL, value: Boolean(args.attrs.transposeB) },
      ];
      return args.backend.executeSingleOutput('MatMul', attrs, [a, b]);
    }) as unknown as tf.KernelFunc,
  });
}

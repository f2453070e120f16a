import * as tf from '@tensorflow/tfjs-core';

/**
 * TensorFlow ops that tfjs has no kernel for, run directly on the native backend.
 *
 * tfjs-node executes every tfjs kernel as one TensorFlow eager op, at ~20–40 µs of fixed cost
 * each, so a computation written as ten small tfjs ops pays ten times. Where TensorFlow has one
 * fused op for it, calling that op through the backend's `executeMultipleOutputs` (the same
 * door tfjs-node's own kernels use) does the work in one call and one pass over memory. The
 * outputs are ordinary engine tensors (tidy and dispose apply); they are not recorded on the
 * gradient tape, so callers use them inside tf.customGrad with their own gradient.
 *
 * Every function returns undefined off the tensorflow backend: the caller keeps a plain-tfjs
 * version, which is what the tests compare against.
 */
interface NodeBackend {
  binding: { TF_ATTR_TYPE: number; TF_FLOAT: number; TF_INT32: number };
  executeMultipleOutputs(name: string, attrs: unknown[], inputs: tf.Tensor[], numOutputs: number): tf.Tensor[];
}

function nodeBackend(): NodeBackend | undefined {
  if (tf.getBackend() !== 'tensorflow') return undefined;
  const b = tf.backend() as unknown as Partial<NodeBackend>;
  return b.binding && b.executeMultipleOutputs ? (b as NodeBackend) : undefined;
}

/**
 * TensorFlow's SparseSoftmaxCrossEntropyWithLogits: per-row loss −log softmax(logits)[label]
 * and its gradient softmax − onehot(label), both from one pass. logits [N, V] float32,
 * labels [N] int32 in [0, V).
 */
export function sparseSoftmaxCrossEntropy(logits: tf.Tensor2D, labels: tf.Tensor1D): { loss: tf.Tensor1D; backprop: tf.Tensor2D } | undefined {
  const b = nodeBackend();
  if (!b) return undefined;
  const attrs = [
    { name: 'T', type: b.binding.TF_ATTR_TYPE, value: b.binding.TF_FLOAT },
    { name: 'Tlabels', type: b.binding.TF_ATTR_TYPE, value: b.binding.TF_INT32 },
  ];
  const [loss, backprop] = b.executeMultipleOutputs('SparseSoftmaxCrossEntropyWithLogits', attrs, [logits, labels], 2);
  return { loss: loss as tf.Tensor1D, backprop: backprop as tf.Tensor2D };
}

import * as tf from '@tensorflow/tfjs-core';
import { fusedLibraryPath, fusedLibraryProblem } from './fused_build';

/**
 * The fused kernels of native/ndbg_ops.cc as tfjs tensor functions, on the "tensorflow" backend
 * when `ndbg backend install` has built them for the loaded TensorFlow; `loadFusedOps()` is
 * undefined otherwise (other backends, library absent) and the fused kernel set (fused_kernels.ts)
 * runs its tfjs form of the same math.
 *
 * The ops run straight through the addon's executeOp: no tfjs kernel lookup and no tape entry
 * (every caller is a forward or gradient function of a tf.customGrad, which records its own).
 * Outputs are ordinary engine tensors, so tidy() and tf.memory() see them.
 */
export interface FusedOps {
  /** x [.., d] → xhat = x·r and r = (mean(x²) + eps)^(−1/2) [.., 1]. */
  rmsNorm(x: tf.Tensor, eps: number): [tf.Tensor, tf.Tensor];
  /** r·(g − xhat·mean(g·xhat)) per row. */
  rmsNormGrad(g: tf.Tensor, xhat: tf.Tensor, r: tf.Tensor): tf.Tensor;
  swiglu(g: tf.Tensor, u: tf.Tensor): tf.Tensor;
  /** [dg, du] of silu(g)·u. */
  swigluGrad(dy: tf.Tensor, g: tf.Tensor, u: tf.Tensor): [tf.Tensor, tf.Tensor];
  /** silu(g)·u for gu [N, 2f] = [g | u] (the product of the concatenated gate and up weights) → [N, f]. */
  swigluPacked(gu: tf.Tensor2D): tf.Tensor2D;
  /** The gradient of swigluPacked, [dg | du] as one [N, 2f]. */
  swigluPackedGrad(dy: tf.Tensor, gu: tf.Tensor): tf.Tensor2D;
  /** x·cos + rotate_half(x)·sin for x [.., T, hd], cos/sin [T, hd]; inverse applies the transpose (the gradient). */
  rope(x: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor, inverse: boolean): tf.Tensor;
  /**
   * The q/k/v product y [B·T, (H + 2·Hkv)·hd] as heads [B, H + 2·Hkv, T, hd] (query, key, value
   * heads in y's column order), RoPE applied to the query and key heads (cos/sin [T, hd]).
   */
  qkvHeads(y: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor, heads: number, kvHeads: number): tf.Tensor4D;
  /** The gradient of qkvHeads: dy [B·T, (H + 2·Hkv)·hd] from the heads' gradient. */
  qkvHeadsGrad(dheads: tf.Tensor, cos: tf.Tensor, sin: tf.Tensor, heads: number, kvHeads: number): tf.Tensor2D;
  /** [Σ scale·CE, (softmax − onehot(targets))·scale] for logits [N, V], targets (int32) and scale [N]. */
  softmaxXent(logits: tf.Tensor2D, targets: tf.Tensor1D, scale: tf.Tensor1D): [tf.Scalar, tf.Tensor2D];
  /** Causal attention: q [B, H, T, hd], k/v [B, Hkv, S, hd], bias [1|B, 1, g·T, S] → [out [B·T, H·hd], P [B, Hkv, g·T, S]]. */
  attention(q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, bias: tf.Tensor): [tf.Tensor2D, tf.Tensor];
  /** [dq, dk, dv] of attention() from dout [B·T, H·hd] and its saved P. */
  attentionGrad(dout: tf.Tensor, q: tf.Tensor, k: tf.Tensor, v: tf.Tensor, p: tf.Tensor): [tf.Tensor, tf.Tensor, tf.Tensor];
  /** The document mask's bias [B, 1, g·T, T] (causal and same-document) from ids [B, T]. */
  documentBias(docIds: tf.Tensor2D, g: number, masked: number): tf.Tensor4D;
  /** AdamW over params with their gradients g (see the op); returns [new params..., new m, new v]. */
  adamW(params: tf.Tensor[], m: tf.Tensor, v: tf.Tensor, g: tf.Tensor[], coefs: tf.Tensor1D): tf.Tensor[];
  /** Σ x² over all the tensors. */
  sumSquares(xs: tf.Tensor[]): tf.Scalar;
}

interface Binding {
  TF_Version: string;
  TF_ATTR_FLOAT: number;
  TF_ATTR_BOOL: number;
  TF_ATTR_INT: number;
  executeOp(name: string, attrs: unknown[], inputs: number[], numOutputs: number): unknown[];
}
interface NodeBackend {
  binding: Binding;
  getInputTensorIds(inputs: tf.TensorInfo[]): number[];
  createOutputTensor(metadata: unknown): tf.Tensor;
}

let state: { ops?: FusedOps } | undefined;

/**
 * The fused ops when they can run on the current backend (loaded once per process, with one
 * log line when not). Only the kernel-set choice at backend start (kernels.ts) asks; the model
 * and optimizer take the ops from the set they were given.
 */
export function loadFusedOps(): FusedOps | undefined {
  if (tf.getBackend() !== 'tensorflow') return undefined;
  if (!state) state = load();
  return state.ops;
}

function load(): { ops?: FusedOps } {
  const backend = tf.backend() as unknown as NodeBackend;
  if ((backend as unknown as { isUsingGpuDevice?: boolean }).isUsingGpuDevice) {
    // The kernels are CPU kernels: on a GPU, TensorFlow's own ops stay on the device.
    process.stderr.write('fused ops: not used on a GPU (they are CPU kernels); the unfused TensorFlow ops run\n');
    return {};
  }
  const version = backend.binding?.TF_Version;
  const problem = version ? fusedLibraryProblem(version) : 'the addon reports no TensorFlow version';
  if (problem) {
    process.stderr.write(`fused ops: ${problem}; the unfused TensorFlow ops run (same results, slower)\n`);
    return {};
  }
  try {
    // A Node-API module that exports nothing: loading it runs its op and kernel registrations.
    process.dlopen({ exports: {} } as NodeJS.Module, fusedLibraryPath(version).lib);
  } catch (e) {
    process.stderr.write(`fused ops: cannot load (${(e as Error).message.split('\n')[0]}); the unfused TensorFlow ops run\n`);
    return {};
  }
  return { ops: makeOps(backend) };
}

function makeOps(backend: NodeBackend): FusedOps {
  const bind = backend.binding;
  // createOutputTensor already returns an engine-tracked tf.Tensor (tfjs-node makes one per output).
  // backend.binding is read per call: bench/step_profile.ts swaps it for a timing wrapper.
  const run = (op: string, inputs: tf.Tensor[], numOutputs: number, attrs: unknown[] = []): tf.Tensor[] =>
    backend.binding.executeOp(op, attrs, backend.getInputTensorIds(inputs), numOutputs).map((m) => backend.createOutputTensor(m));
  const one = (op: string, inputs: tf.Tensor[], attrs: unknown[] = []) => run(op, inputs, 1, attrs)[0];
  const headAttrs = (heads: number, kvHeads: number) => [
    { name: 'n_heads', type: bind.TF_ATTR_INT, value: heads },
    { name: 'n_kv_heads', type: bind.TF_ATTR_INT, value: kvHeads },
  ];
  return {
    rmsNorm: (x, eps) => run('NdbgRmsNorm', [x], 2, [{ name: 'eps', type: bind.TF_ATTR_FLOAT, value: eps }]) as [tf.Tensor, tf.Tensor],
    rmsNormGrad: (g, xhat, r) => one('NdbgRmsNormGrad', [g, xhat, r]),
    swiglu: (g, u) => one('NdbgSwiglu', [g, u]),
    swigluGrad: (dy, g, u) => run('NdbgSwigluGrad', [dy, g, u], 2) as [tf.Tensor, tf.Tensor],
    swigluPacked: (gu) => one('NdbgSwigluPacked', [gu]) as tf.Tensor2D,
    swigluPackedGrad: (dy, gu) => one('NdbgSwigluPackedGrad', [dy, gu]) as tf.Tensor2D,
    rope: (x, cos, sin, inverse) => one('NdbgRope', [x, cos, sin], [{ name: 'inverse', type: bind.TF_ATTR_BOOL, value: inverse }]),
    qkvHeads: (y, cos, sin, heads, kvHeads) => one('NdbgQkvHeads', [y, cos, sin], headAttrs(heads, kvHeads)) as tf.Tensor4D,
    qkvHeadsGrad: (dheads, cos, sin, heads, kvHeads) => one('NdbgQkvHeadsGrad', [dheads, cos, sin], headAttrs(heads, kvHeads)) as tf.Tensor2D,
    softmaxXent: (logits, targets, scale) => run('NdbgSoftmaxXent', [logits, targets, scale], 2) as [tf.Scalar, tf.Tensor2D],
    attention: (q, k, v, bias) => run('NdbgAttention', [q, k, v, bias], 2) as [tf.Tensor2D, tf.Tensor],
    attentionGrad: (dout, q, k, v, p) => run('NdbgAttentionGrad', [dout, q, k, v, p], 3) as [tf.Tensor, tf.Tensor, tf.Tensor],
    documentBias: (docIds, g, masked) =>
      one('NdbgDocumentBias', [docIds], [
        { name: 'g', type: bind.TF_ATTR_INT, value: g },
        { name: 'masked', type: bind.TF_ATTR_FLOAT, value: masked },
      ]) as tf.Tensor4D,
    adamW: (params, m, v, g, coefs) => run('NdbgAdamW', [...params, m, v, ...g, coefs], params.length + 2, [{ name: 'N', type: bind.TF_ATTR_INT, value: params.length }]),
    sumSquares: (xs) => one('NdbgSumSquares', xs, [{ name: 'N', type: bind.TF_ATTR_INT, value: xs.length }]) as tf.Scalar,
  };
}

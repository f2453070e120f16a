/**
 * The backend stage (docs/architecture.md, docs/model.md "Backends"): which tfjs backend runs
 * and its install (the TensorFlow library, the native op library of native/ndbg_ops.cc), the
 * kernels and gradients ndbg registers with tfjs, and the kernel sets the model runs on.
 */
export { initBackend, tfVersion, nativeUnavailableReason, BACKENDS, type BackendChoice, type BackendInfo } from './backend';
export { installBackend, type InstallOptions, type InstallResult } from './backend_install';
export { backendKernels, selectKernels } from './kernels';
export { fusedKernels } from './fused_kernels';
export type { KernelSet, AttentionWeights, MlpWeights, Heads, RopeTables } from './kernel_set';

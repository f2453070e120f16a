import * as tf from '@tensorflow/tfjs-core';
import { loadFusedOps } from './fused_ops';
import { fusedKernels } from './fused_kernels';
import type { KernelSet } from './kernel_set';

export type { KernelSet } from './kernel_set';

const chosen = new Map<string, KernelSet>();

/**
 * Chooses the kernel set for the tfjs backend now running, once (initBackend calls it right
 * after the backend starts): the fused set, with the native ops when they load here.
 * NDBG_FUSED=0 (read here, once per backend) keeps the native library unloaded, so the fused
 * set runs its tfjs form, as before the kernel sets existed.
 */
export function selectKernels(): KernelSet {
  const backend = tf.getBackend();
  let set = chosen.get(backend);
  if (!set) {
    set = fusedKernels(process.env.NDBG_FUSED === '0' ? undefined : loadFusedOps());
    chosen.set(backend, set);
  }
  return set;
}

/** The kernel set chosen when the current backend started (the default of the model and the optimizer). */
export function backendKernels(): KernelSet {
  return selectKernels();
}

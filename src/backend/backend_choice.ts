/**
 * The backend decision as a pure function, so every branch can be tested with the device probes
 * faked (no real GPU build can be exercised on a CPU-only machine; the local wheel index has only
 * CPU TensorFlow). initBackend (backend.ts) gathers the probes and then tries the plan in order.
 */
export type Concrete = 'tensorflow-gpu' | 'tensorflow' | 'wasm' | 'cpu';
export type NativePkg = 'tensorflow-gpu' | 'tensorflow';

export interface ChoiceInput {
  requested: Concrete | 'auto';
  /** Which node addons are installed and openable (addon + libtensorflow present). */
  installed: Record<NativePkg, boolean>;
  /** The node package already loaded in this process (its kernels stay registered). */
  loaded?: NativePkg;
  /** An NVIDIA device node is visible (/dev/nvidiactl or /dev/nvidia0). */
  gpuDevice: boolean;
}

/** One attempt: the backend to start and, for native ones, which package provides it. */
export interface Step {
  backend: Concrete;
  pkg?: NativePkg;
}

export type Plan = { steps: Step[]; log: string[] } | { error: string };

/**
 * Why (b) — the GPU build's own CPU kernels — once tfjs-node-gpu is loaded: both packages register
 * their kernels and backend factory under the one name "tensorflow" when require()d, and two
 * libtensorflow copies in one process clash on TensorFlow's global op registry; so the CPU addon
 * cannot be loaded next to the GPU one. Before anything is loaded and with no device, the CPU addon
 * is preferred when installed (a), as it does not load the CUDA libraries at all.
 */
function tensorflowStep(i: ChoiceInput): Step | undefined {
  if (i.loaded) return { backend: 'tensorflow', pkg: i.loaded };
  if (i.installed.tensorflow) return { backend: 'tensorflow', pkg: 'tensorflow' };
  if (i.installed['tensorflow-gpu']) return { backend: 'tensorflow', pkg: 'tensorflow-gpu' };
  return undefined;
}

function explicit(i: ChoiceInput): Plan {
  const r = i.requested;
  if (r === 'wasm' || r === 'cpu') return { steps: [{ backend: r }], log: [] };
  if (r === 'tensorflow') {
    const s = tensorflowStep(i);
    if (!s) return { error: 'backend tensorflow is unavailable: neither @tensorflow/tfjs-node nor @tensorflow/tfjs-node-gpu is installed (run `ndbg backend install`)' };
    return { steps: [s], log: s.pkg === 'tensorflow-gpu' ? ['tensorflow: running the GPU build of TensorFlow on the CPU'] : [] };
  }
  // tensorflow-gpu
  if (i.loaded === 'tensorflow') return { error: 'backend tensorflow-gpu is unavailable: @tensorflow/tfjs-node (CPU) is already loaded in this process' };
  if (!i.installed['tensorflow-gpu'] && i.loaded !== 'tensorflow-gpu') return { error: 'backend tensorflow-gpu is unavailable: @tensorflow/tfjs-node-gpu is not installed (run `ndbg backend install --gpu`)' };
  if (!i.gpuDevice) return { error: 'backend tensorflow-gpu is unavailable: no NVIDIA device (/dev/nvidiactl absent)' };
  return { steps: [{ backend: 'tensorflow-gpu', pkg: 'tensorflow-gpu' }], log: [] };
}

/** The plan for a request: the steps to try in order and the log lines explaining the choice. */
export function planBackend(i: ChoiceInput): Plan {
  if (i.requested !== 'auto') return explicit(i);
  const steps: Step[] = [];
  const log: string[] = [];
  const gpuAvailable = i.installed['tensorflow-gpu'] || i.loaded === 'tensorflow-gpu';
  if (gpuAvailable && i.gpuDevice && i.loaded !== 'tensorflow') steps.push({ backend: 'tensorflow-gpu', pkg: 'tensorflow-gpu' });
  else if (gpuAvailable) log.push(`not using the GPU: ${i.loaded === 'tensorflow' ? '@tensorflow/tfjs-node (CPU) is already loaded' : 'no NVIDIA device (/dev/nvidiactl absent)'}; running TensorFlow on the CPU`);
  // After a GPU attempt the fallback is the GPU build's CPU kernels (see tensorflowStep).
  const tfStep = steps.length ? { backend: 'tensorflow' as const, pkg: 'tensorflow-gpu' as const } : tensorflowStep(i);
  if (tfStep) steps.push(tfStep);
  // wasm/cpu only when no native library is installed or loaded.
  if (!tfStep) steps.push({ backend: 'wasm' }, { backend: 'cpu' });
  return { steps, log };
}

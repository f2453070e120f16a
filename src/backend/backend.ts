import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs-core';
import { UserError } from '../util/errors';
import { registerGradients } from './gradients';
import { registerNativeKernels } from './native_kernels';
import { registerWasmKernels } from './wasm_kernels';
import { selectKernels } from './kernels';
import { planBackend, ChoiceInput, Step } from './backend_choice';

/**
 * Backend selection. The node bindings (@tensorflow/tfjs-node-gpu, @tensorflow/tfjs-node) need a
 * TensorFlow C library and a compiled addon, which `ndbg backend install` provides
 * (src/backend/backend_install.ts); wasm and cpu ship with the package. The order `auto` tries
 * is planBackend's (backend_choice.ts): tensorflow-gpu when a device is visible, else TensorFlow
 * on the CPU (through the GPU build when that is what is loaded), wasm/cpu only with no native
 * library installed.
 *
 * Loading a node package has side effects that cannot be undone: it registers ~150 kernels under
 * the backend name "tensorflow" *before* it loads its addon, and both packages use that name. So
 * a half-installed package is never require()d: its addon is opened first (that is where a
 * missing or removed libtensorflow shows), and at most one of the two packages is loaded per
 * process. tf.setBackend resolves to false (and silently stays on the previous backend) when
 * initialisation fails, so its result is always checked.
 */
export const BACKENDS = ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'] as const;
export type BackendChoice = (typeof BACKENDS)[number];
type Concrete = Exclude<BackendChoice, 'auto'>;

/** The tfjs backend name each choice registers under (both node packages register "tensorflow"). */
const TF_NAME: Record<Concrete, string> = {
  'tensorflow-gpu': 'tensorflow',
  tensorflow: 'tensorflow',
  wasm: 'wasm',
  cpu: 'cpu',
};

export const NODE_PACKAGES = { 'tensorflow-gpu': '@tensorflow/tfjs-node-gpu', tensorflow: '@tensorflow/tfjs-node' } as const;
export type NativeChoice = keyof typeof NODE_PACKAGES;

export interface BackendInfo {
  choice: Concrete;
  /** tf.getBackend() after selection. */
  name: string;
  detail: string;
}

let current: BackendInfo | undefined;
/** The node package loaded into this process, if any (its kernels stay registered). */
let loadedNative: NativeChoice | undefined;

/** Where a node package's addon and library would be; undefined when the package is not installed. */
export function nativePaths(choice: NativeChoice): { dir: string; binding: string; libtensorflow: string } | undefined {
  let dir: string;
  try {
    dir = path.dirname(require.resolve(`${NODE_PACKAGES[choice]}/package.json`));
  } catch {
    return undefined;
  }
  // node-pre-gyp's module_path for the N-API version tfjs-node 4.x builds (see its package.json).
  return { dir, binding: path.join(dir, 'lib', 'napi-v8', 'tfjs_binding.node'), libtensorflow: path.join(dir, 'deps', 'lib', 'libtensorflow.so') };
}

const INSTALL_HINT = 'run `ndbg backend install`';

/** Opens the addon (and through it libtensorflow) without registering anything; a reason when it cannot. */
function openNative(choice: NativeChoice): string | undefined {
  const p = nativePaths(choice);
  if (!p) return `not installed (${INSTALL_HINT}${choice === 'tensorflow-gpu' ? ' --gpu' : ''})`;
  if (!fs.existsSync(p.libtensorflow)) return `no TensorFlow library at ${p.libtensorflow} (removed? ${INSTALL_HINT}${choice === 'tensorflow-gpu' ? ' --gpu' : ''})`;
  if (!fs.existsSync(p.binding)) return `addon not built (${INSTALL_HINT}${choice === 'tensorflow-gpu' ? ' --gpu' : ''})`;
  // TensorFlow's C++ logging (oneDNN and CPU-feature banners) reads this when the library loads.
  process.env.TF_CPP_MIN_LOG_LEVEL ??= '2';
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(p.binding);
  } catch (e) {
    return `cannot load: ${(e as Error).message.split('\n')[0]}`;
  }
  return undefined;
}

/** True when the machine shows an NVIDIA device node (no point loading CUDA without one). */
function nvidiaDevicePresent(): boolean {
  return fs.existsSync('/dev/nvidiactl') || fs.existsSync('/dev/nvidia0');
}

function loadPackage(choice: Concrete, pkg: NativeChoice = choice as NativeChoice): string {
  switch (choice) {
    case 'tensorflow-gpu':
    case 'tensorflow': {
      // Requiring an already-loaded package returns the cached module: no second registration.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const node = require(NODE_PACKAGES[pkg]) as { version?: Record<string, string> };
      loadedNative = pkg;
      registerNativeKernels();
      const kind = choice === 'tensorflow-gpu' ? ', CUDA' : pkg === 'tensorflow-gpu' ? ', GPU build on the CPU' : ', CPU';
      return `libtensorflow ${tfVersion() ?? '?'}${kind}, tfjs-node ${node.version?.['tfjs-node'] ?? '?'}`;
    }
    case 'wasm': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('@tensorflow/tfjs-backend-wasm');
      registerWasmKernels();
      return 'XNNPACK';
    }
    case 'cpu':
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('@tensorflow/tfjs-backend-cpu');
      return 'plain JS';
  }
}

/** The TensorFlow C library's version once a node package is loaded (TF_Version()). */
export function tfVersion(): string | undefined {
  const choice = loadedNative;
  if (!choice) return undefined;
  const p = nativePaths(choice);
  if (!p) return undefined;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return (require(p.binding) as { TF_Version?: string }).TF_Version;
  } catch {
    return undefined;
  }
}

async function tryBackend(step: Step): Promise<BackendInfo | string> {
  const choice = step.backend;
  if (step.pkg) {
    // planBackend never pairs a step with the other package; kept as a guard.
    if (loadedNative && loadedNative !== step.pkg) return `${NODE_PACKAGES[loadedNative]} is already loaded in this process`;
    if (!loadedNative) {
      const why = openNative(step.pkg);
      if (why) return why;
    }
  }
  let detail: string;
  try {
    detail = loadPackage(choice, step.pkg);
  } catch (e) {
    return `cannot load: ${(e as Error).message.split('\n')[0]}`;
  }
  // Registered after the package: @tensorflow/tfjs (which tfjs-node loads) registers its own
  // gradients for the same kernels, and ndbg's are the ones tested on every backend.
  registerGradients();
  let ok = false;
  try {
    ok = await tf.setBackend(TF_NAME[choice]);
    await tf.ready();
  } catch (e) {
    return `initialisation failed: ${(e as Error).message.split('\n')[0]}`;
  }
  if (!ok || tf.getBackend() !== TF_NAME[choice]) return 'initialisation failed (tf.setBackend returned false)';
  if (choice === 'cpu') {
    // Our own log line names the backend; tfjs-cpu's "install tfjs-node" banner would repeat it.
    (tf.backend() as unknown as { firstUse?: boolean }).firstUse = false;
  }
  if (choice === 'wasm') {
    // These flags are only readable once the wasm module has been instantiated.
    const simd = await tf.env().getAsync('WASM_HAS_SIMD_SUPPORT');
    const threads = await tf.env().getAsync('WASM_HAS_MULTITHREAD_SUPPORT');
    detail += `, SIMD ${simd ? 'on' : 'off'}, ${threads ? 'multi' : 'single'}-threaded`;
  }
  if (choice === 'tensorflow-gpu' && !(tf.backend() as unknown as { isUsingGpuDevice?: boolean }).isUsingGpuDevice) {
    // tfjs-node-gpu falls back to the CPU silently when CUDA is unusable; that is not "gpu".
    return 'libtensorflow loaded but found no usable GPU (CUDA 12 libraries on the library path?)';
  }
  return { choice, name: tf.getBackend(), detail };
}

/**
 * Selects and initialises a backend; logs one line saying which runs (and why others did not
 * when `auto`). Throws a UserError when an explicitly requested backend cannot start.
 */
export async function initBackend(choice: BackendChoice = 'auto', log: (line: string) => void = (l) => process.stderr.write(l + '\n')): Promise<BackendInfo> {
  if (!BACKENDS.includes(choice)) throw new UserError(`--backend ${choice}: expected one of ${BACKENDS.join(', ')}`);
  registerGradients();
  if (current && (choice === 'auto' || choice === current.choice) && tf.getBackend() === current.name) return current;
  const plan = planBackend(probeInputs(choice));
  if ('error' in plan) throw new UserError(plan.error);
  const skipped: string[] = [];
  for (const step of plan.steps) {
    const r = await tryBackend(step);
    if (typeof r !== 'string') {
      current = r;
      // The model's kernel set is chosen here, once per backend (src/backend/kernels.ts).
      selectKernels();
      for (const l of plan.log) log(`backend: ${l}`);
      log(`backend: ${r.choice} (${r.detail})${skipped.length ? `; skipped ${skipped.join('; ')}` : ''}`);
      return r;
    }
    skipped.push(`${step.backend}${step.pkg && step.pkg !== step.backend ? ` (${NODE_PACKAGES[step.pkg]})` : ''}: ${r}`);
  }
  throw new UserError(`backend ${choice} is unavailable: ${[...plan.log, ...skipped].join('; ')}`);
}

/** The real probes planBackend decides on (file checks only: nothing is loaded here). */
function probeInputs(requested: BackendChoice): ChoiceInput {
  return {
    requested,
    installed: { 'tensorflow-gpu': !nativeUnavailableReason('tensorflow-gpu'), tensorflow: !nativeUnavailableReason('tensorflow') },
    loaded: loadedNative,
    gpuDevice: nvidiaDevicePresent(),
  };
}

/** Whether a node backend could start in a fresh process here, without loading it (for tests and `auto`'s callers). */
export function nativeUnavailableReason(choice: NativeChoice = 'tensorflow'): string | undefined {
  const p = nativePaths(choice);
  if (!p) return `${NODE_PACKAGES[choice]} not installed (${INSTALL_HINT})`;
  if (!fs.existsSync(p.libtensorflow)) return `no TensorFlow library at ${p.libtensorflow} (${INSTALL_HINT})`;
  if (!fs.existsSync(p.binding)) return `${NODE_PACKAGES[choice]} addon not built (${INSTALL_HINT})`;
  return undefined;
}

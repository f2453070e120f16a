import * as fs from 'fs';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs-core';
import { UserError } from '../util/errors';
import { registerGradients } from './gradients';
import { registerNativeKernels } from './native_kernels';
import { registerWasmKernels } from './wasm_kernels';
import { selectKernels } from './kernels';

/**
 * Backend selection. The node bindings (@tensorflow/tfjs-node-gpu, @tensorflow/tfjs-node) need a
 * TensorFlow C library and a compiled addon, which `ndbg backend install` provides
 * (src/model/backend_install.ts); wasm and cpu ship with the package. `auto` tries, in order,
 * tensorflow-gpu › tensorflow › wasm › cpu and keeps the first that initialises.
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

const ORDER: Concrete[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];

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

function loadPackage(choice: Concrete): string {
  switch (choice) {
    case 'tensorflow-gpu':
    case 'tensorflow': {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const node = require(NODE_PACKAGES[choice]) as { version?: Record<string, string> };
      loadedNative = choice;
      registerNativeKernels();
      return `libtensorflow ${tfVersion() ?? '?'}${choice === 'tensorflow-gpu' ? ', CUDA' : ', CPU'}, tfjs-node ${node.version?.['tfjs-node'] ?? '?'}`;
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

async function tryBackend(choice: Concrete): Promise<BackendInfo | string> {
  if (choice === 'tensorflow-gpu' || choice === 'tensorflow') {
    if (loadedNative && loadedNative !== choice) return `${NODE_PACKAGES[loadedNative]} is already loaded in this process`;
    if (choice === 'tensorflow-gpu' && !loadedNative && !nvidiaDevicePresent()) return 'no NVIDIA device (/dev/nvidiactl absent)';
    if (!loadedNative) {
      const why = openNative(choice);
      if (why) return why;
    }
  }
  let detail: string;
  try {
    detail = loadPackage(choice);
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
  const candidates = choice === 'auto' ? ORDER : [choice];
  const skipped: string[] = [];
  for (const c of candidates) {
    const r = await tryBackend(c);
    if (typeof r !== 'string') {
      current = r;
      // The model's kernel set is chosen here, once per backend (src/backend/kernels.ts).
      selectKernels();
      log(`backend: ${r.choice} (${r.detail})${skipped.length ? `; skipped ${skipped.join('; ')}` : ''}`);
      return r;
    }
    skipped.push(`${c}: ${r}`);
  }
  throw new UserError(`backend ${choice} is unavailable: ${skipped.join('; ')}`);
}

/** Whether a node backend could start in a fresh process here, without loading it (for tests and `auto`'s callers). */
export function nativeUnavailableReason(choice: NativeChoice = 'tensorflow'): string | undefined {
  const p = nativePaths(choice);
  if (!p) return `${NODE_PACKAGES[choice]} not installed (${INSTALL_HINT})`;
  if (!fs.existsSync(p.libtensorflow)) return `no TensorFlow library at ${p.libtensorflow} (${INSTALL_HINT})`;
  if (!fs.existsSync(p.binding)) return `${NODE_PACKAGES[choice]} addon not built (${INSTALL_HINT})`;
  return undefined;
}

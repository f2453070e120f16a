import * as tf from '@tensorflow/tfjs-core';
import { UserError } from '../util/errors';
import { registerGradients } from './gradients';
import { registerWasmKernels } from './wasm_kernels';

/**
 * Backend selection. The node bindings (@tensorflow/tfjs-node-gpu, @tensorflow/tfjs-node) are
 * optional dependencies that need libtensorflow, so they are require()d lazily inside try/catch;
 * wasm and cpu ship with the package. `auto` tries, in order, tensorflow-gpu › tensorflow › wasm
 * › cpu and keeps the first that initialises. tf.setBackend resolves to false (and silently stays
 * on the previous backend) when initialisation fails, so its result is always checked.
 */
export const BACKENDS = ['auto', 'tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'] as const;
export type BackendChoice = (typeof BACKENDS)[number];

const ORDER: Exclude<BackendChoice, 'auto'>[] = ['tensorflow-gpu', 'tensorflow', 'wasm', 'cpu'];

/** The tfjs backend name each choice registers under (both node packages register "tensorflow"). */
const TF_NAME: Record<Exclude<BackendChoice, 'auto'>, string> = {
  'tensorflow-gpu': 'tensorflow',
  tensorflow: 'tensorflow',
  wasm: 'wasm',
  cpu: 'cpu',
};

export interface BackendInfo {
  choice: Exclude<BackendChoice, 'auto'>;
  /** tf.getBackend() after selection. */
  name: string;
  detail: string;
}

let current: BackendInfo | undefined;

function loadPackage(choice: Exclude<BackendChoice, 'auto'>): string {
  switch (choice) {
    case 'tensorflow-gpu':
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('@tensorflow/tfjs-node-gpu');
      return 'libtensorflow (CUDA)';
    case 'tensorflow':
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      require('@tensorflow/tfjs-node');
      return 'libtensorflow (CPU)';
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

async function tryBackend(choice: Exclude<BackendChoice, 'auto'>): Promise<BackendInfo | string> {
  let detail: string;
  try {
    detail = loadPackage(choice);
  } catch (e) {
    return `cannot load: ${(e as Error).message.split('\n')[0]}`;
  }
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
  if (choice === 'tensorflow-gpu') {
    // tfjs-node-gpu falls back to the CPU silently when CUDA is unusable; that is not "gpu".
    const gpu = hasGpuDevice();
    if (gpu === false) return 'libtensorflow loaded but found no GPU device';
  }
  return { choice, name: tf.getBackend(), detail };
}

function hasGpuDevice(): boolean | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const node = require('@tensorflow/tfjs-node-gpu') as { backend?: () => { isUsingGpuDevice?: boolean } };
    const b = tf.backend() as unknown as { isUsingGpuDevice?: boolean };
    return b.isUsingGpuDevice ?? node.backend?.().isUsingGpuDevice;
  } catch {
    return undefined;
  }
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
      log(`backend: ${r.choice} (${r.detail})${skipped.length ? `; skipped ${skipped.join('; ')}` : ''}`);
      return r;
    }
    skipped.push(`${c}: ${r}`);
  }
  throw new UserError(`backend ${choice} is unavailable: ${skipped.join('; ')}`);
}

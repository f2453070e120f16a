import { spawnSync } from 'child_process';
import * as fs from 'fs';
import { BenchUsageError, flagValue } from './flags';
import type { ModelConfig } from '../src/model/config';
import { assetPath } from '../src/util/paths';

/**
 * The PyTorch peers of `npm run bench -- model`: bench/torch_ref_train.py in each way a user
 * would run it — `eager` (hand-written attention, what the script always ran), `sdpa` (eager with
 * F.scaled_dot_product_attention), `compile` (SDPA under torch.compile, inductor) — at each
 * thread count, with each Python that has torch. The best accepted one is what ndbg is compared
 * with (rounds.ts), since a performance-minded user runs the fastest.
 */
export type TorchMode = 'eager' | 'sdpa' | 'compile';
export const TORCH_MODES: readonly TorchMode[] = ['eager', 'sdpa', 'compile'];

export interface Peer {
  name: string;
  python: string;
  mode: TorchMode;
  threads: number;
  device: 'cpu' | 'cuda';
}

function listFlag(args: string[], name: string, fallback: string): string[] {
  return (flagValue(args, name) ?? fallback).split(',').filter(Boolean);
}

/**
 * Flags: --torch=venv,debian|none (the Pythons), --torch-python=PATH (one more), --torch-modes=
 * eager,sdpa,compile, --torch-threads=1,2, --torch-device=cpu|cuda. `venvPython` is the project's
 * `.venv/bin/python`.
 */
export function peerList(args: string[], venvPython: string): Peer[] {
  const pythons: Array<{ label: string; python: string }> = [];
  const which = listFlag(args, 'torch', 'venv,debian');
  if (which.includes('venv')) pythons.push({ label: '.venv pip', python: venvPython });
  if (which.includes('debian')) pythons.push({ label: 'debian python3-torch', python: '/usr/bin/python3' });
  const extra = flagValue(args, 'torch-python');
  if (extra) pythons.push({ label: extra, python: extra });
  const modes = listFlag(args, 'torch-modes', TORCH_MODES.join(','));
  for (const m of modes) if (!TORCH_MODES.includes(m as TorchMode)) throw new BenchUsageError(`--torch-modes: unknown mode ${m}; known: ${TORCH_MODES.join(', ')}`);
  const threads = listFlag(args, 'torch-threads', '1,2').map(Number);
  for (const t of threads) if (!Number.isInteger(t) || t < 1) throw new BenchUsageError(`--torch-threads: expected integers ≥ 1, got ${flagValue(args, 'torch-threads')}`);
  const device = flagValue(args, 'torch-device') ?? 'cpu';
  if (device !== 'cpu' && device !== 'cuda') throw new BenchUsageError(`--torch-device=${device}: expected cpu or cuda`);
  const out: Peer[] = [];
  for (const p of pythons) for (const mode of modes as TorchMode[]) for (const t of threads) {
    out.push({ name: `pytorch ${mode}${device === 'cuda' ? ' cuda' : ''} ${t}t (${p.label})`, python: p.python, mode, threads: t, device });
  }
  return out;
}

/** The script's arguments for one peer on one model shape (every dimension ndbg's config has). */
export function torchArgs(peer: Peer, c: ModelConfig, batch: number, steps: number, warmup: number, matmul: boolean): string[] {
  const n = (k: string, v: number) => [`--${k}`, String(v)];
  return [
    ...n('vocab', c.vocab_size), ...n('d', c.d_model), ...n('layers', c.n_layers), ...n('heads', c.n_heads),
    ...n('kv-heads', c.n_kv_heads), ...n('ff', c.d_ff), ...n('seq', c.max_seq_len), ...n('theta', c.rope_theta),
    ...n('eps', c.norm_eps), ...n('batch', batch), ...n('steps', steps),
    // torch.compile compiles in its first step(s): at least one warm-up step keeps that out of the timing.
    ...n('warmup', peer.mode === 'compile' ? Math.max(warmup, 1) : warmup),
    ...n('threads', peer.threads), ...n('sdpa', peer.mode === 'eager' ? 0 : 1), ...n('compile', peer.mode === 'compile' ? 1 : 0),
    '--device', peer.device, ...n('matmul', matmul ? 1 : 0),
  ];
}

/** The script's one output line of key=value pairs; numbers become numbers. */
export function parseKeyValues(line: string): Record<string, string | number> {
  return Object.fromEntries(
    line.trim().split(/\s+/).filter((p) => p.includes('=')).map((p) => {
      const i = p.indexOf('=');
      const v = p.slice(i + 1);
      return [p.slice(0, i), v !== '' && Number.isFinite(Number(v)) ? Number(v) : v];
    }),
  );
}

/** Exit 4 from the script: this torch cannot run the request (no CUDA, SDPA or compile). */
const UNSUPPORTED = 4;

const pythonChecked = new Map<string, string | undefined>();

/** Why this Python cannot be a peer at all (absent, or no torch); undefined when it can. Checked once per run. */
export function pythonProblem(python: string): string | undefined {
  if (!pythonChecked.has(python)) {
    let why: string | undefined;
    if (!fs.existsSync(python)) why = 'not found';
    else {
      const probe = spawnSync(python, ['-c', 'import torch'], { encoding: 'utf8' });
      if (probe.status !== 0) why = `no torch (${lastLine(probe.stderr)})`;
    }
    pythonChecked.set(python, why);
  }
  return pythonChecked.get(python);
}

/**
 * One torch measurement; a string says why there is none (the peer is then skipped for the rest
 * of the run). A torch on the reference BLAS is an error, not a skip: the run would otherwise
 * report a peer ~50× too slow.
 */
export function torchRun(peer: Peer, c: ModelConfig, batch: number, steps: number, warmup: number, matmul: boolean): Record<string, string | number> | string {
  const r = spawnSync(peer.python, [assetPath('bench/torch_ref_train.py'), ...torchArgs(peer, c, batch, steps, warmup, matmul)], { encoding: 'utf8', env: peerEnv() });
  if (/reference BLAS/.test(r.stderr ?? '')) throw new Error(`${peer.name}: ${lastLine(r.stderr)}`);
  if (r.status === 0) return { ...parseKeyValues(r.stdout.trim().split('\n').pop() ?? ''), ...overriddenBlasEnv() };
  if (r.status === UNSUPPORTED) return `skipped: ${lastLine(r.stderr)}`;
  return `failed: ${lastLine(r.stderr) || `exit ${r.status ?? r.signal}`}`;
}

/**
 * OpenBLAS settings a machine may set for every process (machines of this kind set
 * OPENBLAS_CORETYPE=Haswell, on AVX-512 CPUs too): they hold an OpenBLAS peer (Debian's
 * python3-torch) to older kernels, which a user tuning PyTorch would not keep, so the peer runs
 * without them. pip's torch does not use OpenBLAS (it links MKL statically; the OpenBLAS mapped
 * in its process is numpy's), so these variables do not touch its matmuls; its label says which
 * kernels MKL chose (torch_ref_train.py mkl_code_path).
 */
const BLAS_OVERRIDES = ['OPENBLAS_CORETYPE', 'OPENBLAS_L2_SIZE'];

export function peerEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of BLAS_OVERRIDES) delete env[k];
  return env;
}

/** What the peer ran without, recorded beside its figures. */
function overriddenBlasEnv(): Record<string, string> {
  const unset = BLAS_OVERRIDES.filter((k) => process.env[k] !== undefined).map((k) => `${k}=${process.env[k]}`);
  return unset.length ? { blas_env_unset: unset.join(' ') } : {};
}

function lastLine(s: string | null | undefined): string {
  return (s ?? '').trim().split('\n').pop() ?? '';
}

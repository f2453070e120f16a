import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs-core';
import { benchCorpus } from './corpus';
import { flagValue, intFlag } from './flags';
import type { TokenBatch } from '../src/data/batch';
import { BackendChoice, initBackend, tfVersion } from '../src/backend/backend';
import { loadModelConfig, modelStats } from '../src/model/config';
import { LlamaModel } from '../src/model/model';
import { AdamW, decayRule } from '../src/train/adamw';
import { dataStreams, trainableLlama } from '../src/train/adapters';
import { loadRunConfig, type ResolvedRun } from '../src/train/run_config';
import { trainStep } from '../src/train/step';
import { assetPath } from '../src/util/paths';
import { median } from '../src/util/stats';

/**
 * `npm run bench -- model`: training throughput (tokens/s, MFU) of the quickstart, tiny and small
 * shapes (each at its config's T and micro-batch) on each ndbg backend and on PyTorch, side by side in one run.
 *
 * ndbg's step is the product's: batches from the product loader (a data set built from the test
 * corpus with the config's tokenizer, so rows carry real document boundaries and the document
 * mask is on, as in training), `trainStep` (forward + backward + global-norm clip + AdamW from
 * src/train). PyTorch runs bench/torch_ref_train.py (the same Llama shape: RMSNorm, RoPE,
 * SwiGLU, tied head, AdamW, clipping; causal mask only) with the Python peers' venv
 * (`.venv/bin/python`, pip torch, --threads 2) and, when installed, Debian's python3-torch
 * (`/usr/bin/python3`, --threads 1); the script refuses a torch on the reference BLAS.
 *
 * MFU = achieved FLOP/s ÷ the CPU's nominal fp32 peak (cores × MHz × FLOPs/cycle: 64 with
 * AVX-512 (2 FMA units × 16 lanes × 2), 32 with AVX2+FMA); FLOPs per token are
 * modelStats().trainFlopsPerToken (6·N_matmul + 12·L·d·T), the formula the torch script uses.
 *
 * Shapes run one after another; on each, PyTorch and every backend run back to back. With
 * --rounds=N the whole sequence repeats N times and each number is the median over rounds (the
 * per-round values and the load average at each are kept): on a shared machine one round can
 * land in someone else's burst.
 *
 * Flags (--name=value): --backends=tensorflow,wasm --shapes=quickstart,tiny,small --steps=N
 * --warmup=N --rounds=N --torch=venv,debian|none --torch-python=PATH (adds a peer)
 */
/** The benchmarked shapes: a config and the tokenizer its vocabulary size belongs to. */
export const SHAPES: Record<string, { config: string; tokenizer: string }> = {
  quickstart: { config: 'configs/quickstart.json', tokenizer: 'tokenizer/ndbg-2k.model' },
  tiny: { config: 'configs/tiny.json', tokenizer: 'tokenizer/ndbg-8k.model' },
  small: { config: 'configs/small.json', tokenizer: 'tokenizer/ndbg-8k.model' },
};


/** Nominal fp32 peak of this CPU (documented assumption above), in GFLOP/s. */
export function cpuPeakGflops(): { gflops: number; basis: string } {
  const info = fs.existsSync('/proc/cpuinfo') ? fs.readFileSync('/proc/cpuinfo', 'utf8') : '';
  const flags = /^flags\s*:(.*)$/m.exec(info)?.[1].split(/\s+/) ?? [];
  const mhz = Number(/^cpu MHz\s*:\s*([\d.]+)/m.exec(info)?.[1] ?? os.cpus()[0]?.speed ?? 0);
  const perCycle = flags.includes('avx512f') ? 64 : flags.includes('fma') ? 32 : 16;
  const cores = os.cpus().length;
  return { gflops: (cores * mhz * perCycle) / 1000, basis: `${cores} cores × ${mhz} MHz × ${perCycle} FLOP/cycle` };
}

interface Peer {
  name: string;
  python: string;
  threads: number;
}

function peers(args: string[]): Peer[] {
  const which = (flagValue(args, 'torch') ?? 'venv,debian').split(',');
  const out: Peer[] = [];
  const venv = assetPath('.venv/bin/python');
  if (which.includes('venv')) out.push({ name: 'pytorch (.venv pip)', python: venv, threads: 2 });
  if (which.includes('debian')) out.push({ name: 'pytorch (debian python3-torch)', python: '/usr/bin/python3', threads: 1 });
  const extra = flagValue(args, 'torch-python');
  if (extra) out.push({ name: `pytorch (${extra})`, python: extra, threads: intFlag(args, 'torch-threads', 2) });
  return out;
}

/** One torch measurement; a string says why there is none (a torch on the reference BLAS is an error). */
function torchRun(peer: Peer, shape: ResolvedRun['model'], batch: number, steps: number, warmup: number): Record<string, string | number> | string {
  if (!fs.existsSync(peer.python)) return `${peer.python} not found`;
  const probe = spawnSync(peer.python, ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.status !== 0) return `${peer.python}: no torch (${(probe.stderr || '').trim().split('\n').pop()})`;
  const r = spawnSync(
    peer.python,
    [assetPath('bench/torch_ref_train.py'), '--vocab', String(shape.vocab_size), '--d', String(shape.d_model), '--layers', String(shape.n_layers), '--heads', String(shape.n_heads),
      '--seq', String(shape.max_seq_len), '--batch', String(batch), '--steps', String(steps), '--warmup', String(warmup), '--threads', String(peer.threads)],
    { encoding: 'utf8' },
  );
  if (r.status === 3 || /reference BLAS/.test(r.stderr ?? '')) throw new Error(`${peer.name}: ${(r.stderr || '').trim().split('\n').pop()}`);
  if (r.status !== 0) return `${peer.name} failed: ${(r.stderr || '').trim().split('\n').pop()}`;
  return Object.fromEntries(
    r.stdout.trim().split(/\s+/).map((p) => p.split('=')).map(([k, v]) => [k, Number.isFinite(Number(v)) ? Number(v) : v]),
  );
}

/** A data set with the shape's tokenizer and row length, built once per (tokenizer, T). */
async function dataFor(tmp: string, tokenizer: string, seqLen: number): Promise<string> {
  const dir = path.join(tmp, `${path.basename(tokenizer, '.model')}-T${seqLen}`);
  return benchCorpus(dir, assetPath(tokenizer), seqLen);
}

/**
 * The product's training on a fresh model: `count` batches drawn beforehand from the product's
 * loader, and `step(i)` running `trainStep` (forward, backward, clipping, AdamW) on batch i.
 */
export function productTraining(run: ResolvedRun, count: number): { batches: TokenBatch[]; step: (i: number) => { loss: number }; dispose: () => void } {
  const llama = LlamaModel.create(run.model, 0);
  const model = trainableLlama(llama, run.model, run.seqLen);
  const o = run.config.optim;
  const rule = decayRule(o.no_decay, o.decay_vectors);
  const adam = new AdamW(model.params.map((p) => ({ ...p, decay: rule(p.name, p.variable.shape) })), { beta1: o.beta1, beta2: o.beta2, eps: o.eps, weightDecay: o.weight_decay });
  const stream = dataStreams(run.config, run.seqLen, run.manifest.tokenizer.sha256).openTrainStream();
  const batches: TokenBatch[] = Array.from({ length: count }, () => stream.next());
  return {
    batches,
    step: (i) => trainStep(model, adam, [batches[i]], { lr: 3e-4, gradClip: o.grad_clip }),
    dispose: () => {
      adam.dispose();
      llama.dispose();
    },
  };
}

/** Median seconds of the product's train step. */
function ndbgSteps(run: ResolvedRun, steps: number, warmup: number): { stepS: number; loss: number } {
  const training = productTraining(run, warmup + steps);
  const times: number[] = [];
  let loss = NaN;
  for (let s = 0; s < warmup + steps; s++) {
    const t0 = performance.now();
    loss = training.step(s).loss;
    if (s >= warmup) times.push((performance.now() - t0) / 1000);
  }
  training.dispose();
  return { stepS: median(times), loss };
}

/** The backend's own 1024³ matmul rate (GFLOP/s): the most a step made of matmuls could reach on it. */
function matmulGflops(): number {
  const n = 1024;
  const a = tf.randomNormal([n, n], 0, 1, 'float32', 1);
  const b = tf.randomNormal([n, n], 0, 1, 'float32', 2);
  const times: number[] = [];
  for (let i = 0; i < 4; i++) {
    const t0 = performance.now();
    const c = tf.matMul(a, b);
    c.dataSync();
    times.push(performance.now() - t0);
    c.dispose();
  }
  a.dispose();
  b.dispose();
  return (2 * n ** 3) / (median(times.slice(1)) / 1000) / 1e9;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const backends = (flagValue(args, 'backends') ?? 'tensorflow,wasm').split(',');
  const shapes = (flagValue(args, 'shapes') ?? 'quickstart,tiny,small').split(',');
  const steps = intFlag(args, 'steps', 6);
  const warmup = intFlag(args, 'warmup', 2, 0);
  const rounds = intFlag(args, 'rounds', 1);
  for (const s of shapes) if (!SHAPES[s]) throw new Error(`unknown shape ${s}; known: ${Object.keys(SHAPES).join(', ')}`);
  const peak = cpuPeakGflops();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-bench-model-'));
  const rows: Record<string, unknown>[] = [];
  const skipped: string[] = [];
  const runs: Record<string, ResolvedRun> = {};
  const batchOf = (s: string) => runs[s].config.train.micro_batch_size;
  try {
    for (const s of shapes) {
      const shape = SHAPES[s];
      const data = await dataFor(tmp, shape.tokenizer, loadModelConfig(assetPath(shape.config)).max_seq_len);
      // Each shape trains at its config's micro-batch, as users run it; grad_accum 1 so a step is one batch.
      runs[s] = loadRunConfig(assetPath(shape.config), [`data.datasets=${JSON.stringify([data])}`, 'train.grad_accum=1']);
    }
    // One entry per framework and shape; each round adds a step time and the load average then.
    const samples = new Map<string, { framework: string; shape: string; stepS: number[]; load: number[]; extra: Record<string, unknown> }>();
    const row = (framework: string, s: string, stepS: number, extra: Record<string, unknown>) => {
      const key = `${framework}|${s}`;
      const e = samples.get(key) ?? { framework, shape: s, stepS: [], load: [], extra };
      e.stepS.push(stepS);
      e.load.push(+os.loadavg()[0].toFixed(2));
      samples.set(key, e);
    };
    // Interleaved by shape (PyTorch, then each backend, then the next shape), so the frameworks
    // compared on one shape ran seconds apart: on a shared machine the load moves over minutes.
    const started: Record<string, { choice: string; detail: string; matmul: number } | undefined> = {};
    const torchDone = new Set<string>();
    for (let round = 0; round < rounds; round++) for (const s of shapes) {
      for (const peer of peers(args)) {
        if (torchDone.has(peer.name)) continue;
        process.stderr.write(`${peer.name} ${s}...\n`);
        const r = torchRun(peer, runs[s].model, batchOf(s), steps, warmup);
        if (typeof r === 'string') {
          skipped.push(`${peer.name}: ${r}`);
          torchDone.add(peer.name);
          continue;
        }
        row(peer.name, s, Number(r.median_step_s), { torch: r.torch, blas: r.blas, threads: r.threads, loss: r.loss });
      }
      for (const b of backends) {
        if (b in started && !started[b]) continue;
        let info;
        try {
          info = await initBackend(b as BackendChoice, (l) => process.stderr.write(`${l}\n`));
        } catch (e) {
          skipped.push(`ndbg/${b}: ${(e as Error).message}`);
          started[b] = undefined;
          continue;
        }
        started[b] ??= { choice: info.choice, detail: info.detail, matmul: matmulGflops() };
        const st = started[b]!;
        process.stderr.write(`ndbg/${st.choice} ${s}: ${steps} steps...\n`);
        const r = ndbgSteps(runs[s], steps, warmup);
        row(`ndbg/${st.choice}`, s, r.stepS, { backend: st.detail, tf_version: st.choice.startsWith('tensorflow') ? tfVersion() : undefined, matmul_1024_gflops: +st.matmul.toFixed(1), loss: +r.loss.toFixed(4) });
      }
    }
    for (const e of samples.values()) {
      const m = runs[e.shape].model;
      const batch = batchOf(e.shape);
      const tokens = batch * m.max_seq_len;
      const stepS = median(e.stepS);
      const gflops = (modelStats(m).trainFlopsPerToken * tokens) / stepS / 1e9;
      rows.push({
        framework: e.framework,
        shape: e.shape,
        dims: { V: m.vocab_size, d: m.d_model, L: m.n_layers, H: m.n_heads, T: m.max_seq_len, B: batch },
        median_step_s: +stepS.toFixed(4),
        tokens_per_s: Math.round(tokens / stepS),
        achieved_gflops: +gflops.toFixed(1),
        mfu: +(gflops / peak.gflops).toFixed(3),
        ...(rounds > 1 ? { rounds_tokens_per_s: e.stepS.map((x) => Math.round(tokens / x)), rounds_load_average: e.load } : { load_average_1min: e.load[0] }),
        ...e.extra,
      });
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  // Ratios against each peer, same shape, same run (medians over rounds).
  const ratios: Record<string, Record<string, number>> = {};
  for (const r of rows.filter((x) => String(x.framework).startsWith('ndbg/'))) {
    for (const p of rows.filter((x) => String(x.framework).startsWith('pytorch') && x.shape === r.shape)) {
      const key = `${r.framework} ÷ ${p.framework}`;
      ratios[key] = { ...(ratios[key] ?? {}), [String(r.shape)]: +((r.tokens_per_s as number) / (p.tokens_per_s as number)).toFixed(3) };
    }
  }
  return { batch: Object.fromEntries(shapes.map((s) => [s, batchOf(s)])), steps, warmup, rounds, cpu_peak_gflops: +peak.gflops.toFixed(1), cpu_peak_basis: peak.basis, load_average: os.loadavg().map((x) => +x.toFixed(2)), results: rows, ratios, skipped };
}

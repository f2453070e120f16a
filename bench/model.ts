import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as tf from '@tensorflow/tfjs-core';
import { BackendChoice, initBackend } from '../model/backend';
import { loadModelConfig, ModelConfig, modelStats } from '../model/config';
import { LlamaModel } from '../model/model';
import { assetPath } from '../util/paths';
import { Rng } from '../util/rng';

/**
 * Training throughput of the model: tokens/s and MFU for configs/tiny.json and configs/small.json
 * on each backend that loads here, side by side (same process run) with the PyTorch reference
 * (/usr/bin/python3 + python3-torch, single thread, same dims) when it is installed.
 *
 * The measured step is forward + backward + an Adam update, batch 8 at the config's max_seq_len.
 * FLOPs per step = trainFlopsPerToken (6·N_matmul + 12·L·d·T) × tokens. MFU is reported against
 * the backend's own measured 1024³ matmul rate (the best a step of matmuls could do on it), and
 * the tfjs/torch ratio is the figure to compare across machines.
 *
 * Flags (--name=value): --backends=wasm,cpu --configs=tiny,small --steps=N --batch=B
 * --vocab=V (override vocab_size, e.g. 256 to match the reference numbers) --no-torch --cpu-small
 */
const TORCH_SCRIPT_CANDIDATES = [assetPath('src/bench/torch_ref_train.py'), '/work/shared/bench/torch_ref_train.py'];

function flag(args: string[], name: string): string | undefined {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  return args[i].includes('=') ? args[i].split('=')[1] : args[i + 1];
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function matmulPeakGflops(): number {
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

function trainStepTimes(config: ModelConfig, batch: number, steps: number, warmup: number): { stepS: number; loss: number } {
  const model = LlamaModel.create(config, 0);
  const T = config.max_seq_len;
  const rng = Rng.from(0, 'bench');
  const ids = Array.from({ length: batch }, () => Int32Array.from({ length: T + 1 }, () => rng.int(config.vocab_size)));
  const m = new Map<string, tf.Variable>();
  const v = new Map<string, tf.Variable>();
  for (const [name, p] of model.trainableVariables()) {
    m.set(name, tf.variable(tf.zerosLike(p), false));
    v.set(name, tf.variable(tf.zerosLike(p), false));
  }
  const times: number[] = [];
  let loss = NaN;
  for (let step = 0; step < warmup + steps; step++) {
    const t0 = performance.now();
    tf.tidy(() => {
      const { loss: l, grads } = model.lossAndGrads({ ids });
      const lr = 3e-4;
      for (const [name, p] of model.trainableVariables()) {
        const g = grads.get(name) as tf.Tensor;
        const mi = m.get(name) as tf.Variable;
        const vi = v.get(name) as tf.Variable;
        mi.assign(tf.add(tf.mul(mi, 0.9), tf.mul(g, 0.1)));
        vi.assign(tf.add(tf.mul(vi, 0.999), tf.mul(tf.square(g), 0.001)));
        p.assign(tf.sub(p, tf.mul(tf.div(mi, tf.add(tf.sqrt(vi), 1e-8)), lr)));
      }
      loss = l.dataSync()[0];
    });
    if (step >= warmup) times.push((performance.now() - t0) / 1000);
  }
  model.dispose();
  for (const t of [...m.values(), ...v.values()]) t.dispose();
  return { stepS: median(times), loss };
}

function torchReference(config: ModelConfig, batch: number, steps: number): Record<string, unknown> | string {
  const script = TORCH_SCRIPT_CANDIDATES.find((p) => fs.existsSync(p));
  if (!script) return 'reference script not found';
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import torch'], { stdio: 'ignore' });
  } catch {
    return 'PyTorch not installed (apt-get install python3-torch)';
  }
  const out = execFileSync(
    '/usr/bin/python3',
    [script, '--vocab', String(config.vocab_size), '--d', String(config.d_model), '--layers', String(config.n_layers), '--heads', String(config.n_heads),
      '--seq', String(config.max_seq_len), '--batch', String(batch), '--steps', String(steps), '--warmup', '2', '--threads', '1'],
    { encoding: 'utf8' },
  );
  const kv = Object.fromEntries(out.trim().split(/\s+/).map((p) => p.split('=')).map(([k, v]) => [k, Number(v)]));
  return kv;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const backends = (flag(args, 'backends') ?? 'tensorflow-gpu,tensorflow,wasm,cpu').split(',');
  const configs = (flag(args, 'configs') ?? 'tiny,small').split(',');
  const steps = Number(flag(args, 'steps') ?? 5);
  const batch = Number(flag(args, 'batch') ?? 8);
  const withTorch = !args.includes('--no-torch');
  const vocab = flag(args, 'vocab');
  const load = (name: string): ModelConfig => {
    const c = loadModelConfig(assetPath(`configs/${name}.json`));
    return vocab ? { ...c, vocab_size: Number(vocab) } : c;
  };
  const results: Record<string, unknown>[] = [];
  const torch: Record<string, unknown> = {};
  for (const name of configs) {
    const config = load(name);
    if (withTorch) {
      process.stderr.write(`torch reference ${name}...\n`);
      torch[name] = torchReference(config, batch, steps);
    }
  }
  for (const backend of backends) {
    try {
      await initBackend(backend as BackendChoice);
    } catch (e) {
      results.push({ backend, skipped: (e as Error).message });
      continue;
    }
    const peak = matmulPeakGflops();
    for (const name of configs) {
      const config = load(name);
      if (backend === 'cpu' && name !== 'tiny' && !args.includes('--cpu-small')) {
        results.push({ backend, config: name, skipped: 'cpu backend: only tiny by default (~1 GFLOP/s); pass --cpu-small' });
        continue;
      }
      const n = backend === 'cpu' ? Math.min(steps, 2) : steps;
      process.stderr.write(`${backend} ${name}: ${n} steps...\n`);
      const { stepS, loss } = trainStepTimes(config, batch, n, backend === 'cpu' ? 1 : 2);
      const tokens = batch * config.max_seq_len;
      const flops = modelStats(config).trainFlopsPerToken * tokens;
      const tps = tokens / stepS;
      const ref = torch[name] as { tokens_per_s?: number } | string | undefined;
      const torchTps = typeof ref === 'object' ? ref.tokens_per_s : undefined;
      results.push({
        backend,
        config: name,
        dims: { V: config.vocab_size, d: config.d_model, L: config.n_layers, H: config.n_heads, T: config.max_seq_len, B: batch },
        median_step_s: +stepS.toFixed(4),
        tokens_per_s: Math.round(tps),
        achieved_gflops: +(flops / stepS / 1e9).toFixed(2),
        matmul_peak_gflops: +peak.toFixed(2),
        mfu_vs_matmul_peak: +(flops / stepS / 1e9 / peak).toFixed(3),
        loss: +loss.toFixed(4),
        torch_tokens_per_s: torchTps,
        ratio_vs_torch: torchTps ? +(tps / torchTps).toFixed(3) : undefined,
      });
    }
  }
  return { steps, batch, torch, results };
}

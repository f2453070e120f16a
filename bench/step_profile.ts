import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs-core';
import { benchCorpus } from './corpus';
import { flagValue, intFlag } from './flags';
import { productTraining, SHAPES } from './model';
import { BackendChoice, initBackend } from '../src/backend/backend';
import { loadModelConfig } from '../src/model/config';
import { loadRunConfig } from '../src/train/run_config';
import { assetPath } from '../src/util/paths';
import { median } from '../src/util/stats';

/**
 * `npm run bench -- step-profile [--shape=quickstart] [--steps=4] [--batch=B] [--backend=tensorflow] [--by-shape]`:
 * where a train step's time goes on the native backend. Every TensorFlow eager op goes through
 * the addon's `executeOp` (synchronous on CPU), so wrapping it gives each op's wall time; the
 * rest of the step (JS: tfjs engine bookkeeping, tape, host loops, tensor uploads) is the
 * step time minus the op time. Reports ops per step and time by op name (and output shape with --by-shape), largest first.
 */


interface OpStat {
  count: number;
  ms: number;
}

/**
 * Puts a wrapper in front of the native addon (its exports are read-only, so the backend's
 * `binding` field is swapped for an object that inherits from it) so every executeOp call is
 * counted and timed by op name, and the host↔TensorFlow copies (createTensor, tensorDataSync)
 * and deleteTensor under their own names in parentheses.
 */
function instrument(stats: Map<string, OpStat>, byShape: boolean): () => void {
  type Fn = (...a: unknown[]) => unknown;
  const backend = tf.backend() as unknown as { binding?: Record<string, Fn> };
  const original = backend.binding;
  if (!original) throw new Error('step-profile needs the tensorflow backend (no native binding found)');
  const timed = Object.create(original) as Record<string, Fn>;
  const wrap = (fn: string, label: (a: unknown[], out: unknown) => string) =>
    // defineProperty, not assignment: the inherited property is read-only.
    Object.defineProperty(timed, fn, {
      value: (...a: unknown[]) => {
        const t0 = performance.now();
        let out: unknown;
        try {
          out = original[fn](...a);
          return out;
        } finally {
          const name = label(a, out);
          const s = stats.get(name) ?? { count: 0, ms: 0 };
          s.count += 1;
          s.ms += performance.now() - t0;
          stats.set(name, s);
        }
      },
    });
  wrap('executeOp', (a, out) => (byShape ? `${a[0]} → ${(out as Array<{ shape: number[] }> | undefined)?.map((o) => `[${o.shape}]`).join(' ')}` : String(a[0])));
  for (const fn of ['createTensor', 'tensorDataSync', 'deleteTensor']) wrap(fn, () => `(${fn})`);
  backend.binding = timed;
  return () => {
    backend.binding = original;
  };
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const shapeName = flagValue(args, 'shape') ?? 'quickstart';
  const shape = SHAPES[shapeName];
  if (!shape) throw new Error(`unknown shape ${shapeName}; known: ${Object.keys(SHAPES).join(', ')}`);
  const steps = intFlag(args, 'steps', 4);
  const warmup = intFlag(args, 'warmup', 2, 0);
  const info = await initBackend((flagValue(args, 'backend') ?? 'tensorflow') as BackendChoice, (l) => process.stderr.write(`${l}\n`));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-bench-profile-'));
  try {
    const seqLen = loadModelConfig(assetPath(shape.config)).max_seq_len;
    const data = await benchCorpus(path.join(tmp, 'data'), assetPath(shape.tokenizer), seqLen);
    // The shape's own micro-batch by default, as `bench -- model` runs it: per-op costs weigh
    // more at small batches, so a profile at another batch can point at the wrong op.
    const batch = flagValue(args, 'batch');
    const runCfg = loadRunConfig(assetPath(shape.config), [`data.datasets=${JSON.stringify([data])}`, ...(batch ? [`train.micro_batch_size=${Number(batch)}`] : []), 'train.grad_accum=1']);
    const training = productTraining(runCfg, warmup + steps);
    const stats = new Map<string, OpStat>();
    const times: number[] = [];
    let restore: (() => void) | undefined;
    for (let s = 0; s < warmup + steps; s++) {
      if (s === warmup) restore = instrument(stats, args.includes('--by-shape'));
      const t0 = performance.now();
      training.step(s);
      if (s >= warmup) times.push(performance.now() - t0);
    }
    restore?.();
    training.dispose();
    const total = times.reduce((a, b) => a + b, 0);
    const opMs = [...stats.values()].reduce((a, s) => a + s.ms, 0);
    const opCount = [...stats.values()].reduce((a, s) => a + s.count, 0);
    const byOp = [...stats].sort((a, b) => b[1].ms - a[1].ms).map(([op, s]) => ({ op, per_step: +(s.count / steps).toFixed(1), ms_per_step: +(s.ms / steps).toFixed(2), share: +(s.ms / total).toFixed(3) }));
    return {
      backend: info.detail,
      shape: shapeName,
      micro_batch: runCfg.config.train.micro_batch_size,
      steps,
      load_average: os.loadavg().map((x) => +x.toFixed(2)),
      median_step_ms: +median(times).toFixed(1),
      ops_per_step: +(opCount / steps).toFixed(1),
      op_ms_per_step: +(opMs / steps).toFixed(1),
      host_ms_per_step: +((total - opMs) / steps).toFixed(1),
      by_op: byOp,
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

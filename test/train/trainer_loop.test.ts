import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { OptimSchema, TrainSchema } from '../../src/train/config';
import { latestCheckpoint, listCheckpoints, checkpointsRoot } from '../../src/train/checkpoint_dir';
import { FAULT_POINTS, InjectedFault } from '../../src/train/fault';
import { readMetrics } from '../../src/train/metrics';
import { train, TrainerDeps } from '../../src/train/trainer';
import type { RngState } from '../../src/util/rng';
import type { TokenBatch } from '../../src/data/batch';
import type { BatchStream } from '../../src/train/types';
import { SyntheticStream, tinyModel } from './helpers';

/** The loop in-process on the small helper model: resume logic, guards, retention. */
const V = 17;
let dir: string;
beforeAll(async () => {
  await tf.setBackend('cpu');
});
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-loop-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const trainCfg = (over: Record<string, unknown> = {}) =>
  TrainSchema.parse({ steps: 10, micro_batch_size: 3, grad_accum: 2, seed: 4, eval_every: 5, eval_batches: 2, checkpoint_every: 3, ...over });
const optimCfg = OptimSchema.parse({ schedule: { kind: 'cosine', peak_lr: 0.05, warmup_steps: 2, min_lr: 0.005 } });

let modelCount = 0;
function deps(opts: { failAtBatch?: number; initSeed?: number; config?: Record<string, unknown> } = {}): TrainerDeps {
  const model = tinyModel(V, 8, opts.initSeed ?? 1, `loop${modelCount++}`);
  return {
    model,
    openTrainStream(state?: unknown): BatchStream {
      const s = new SyntheticStream(V, 3, 12, 9, state as RngState | undefined);
      let n = 0;
      return {
        next: (): TokenBatch => {
          if (opts.failAtBatch !== undefined && n++ === opts.failAtBatch) throw new Error('simulated crash');
          return s.next();
        },
        state: () => s.state(),
      };
    },
    validationBatches: (count) => {
      const s = new SyntheticStream(V, 3, 12, 99);
      return Array.from({ length: count }, () => s.next());
    },
    backend: 'cpu',
    resolvedConfig: opts.config ?? { model: { v: V }, train: { seed: 4, micro_batch_size: 3, grad_accum: 2 } },
    tokenizer: { path: 'synthetic' },
  };
}

const bytes = (t: { data: Float32Array }) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);

describe('training loop', () => {
  it('a crash after a checkpoint and --resume reproduce every loss and the final weights bit for bit', async () => {
    const a = deps();
    await train(a, { runDir: path.join(dir, 'a'), train: trainCfg(), optim: optimCfg, resume: false, quiet: true });

    // Crash while fetching the batches of step 8 (the last checkpoint is step 6; step 7 was logged).
    const b1 = deps({ failAtBatch: 14 });
    await expect(
      train(b1, { runDir: path.join(dir, 'b'), train: trainCfg(), optim: optimCfg, resume: false, quiet: true }),
    ).rejects.toThrow('simulated crash');
    expect(readMetrics(path.join(dir, 'b', 'metrics.jsonl')).map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // Resume into a model initialised differently: everything must come from the checkpoint.
    const b2 = deps({ initSeed: 77 });
    const summary = await train(b2, { runDir: path.join(dir, 'b'), train: trainCfg(), optim: optimCfg, resume: true, quiet: true });
    expect(summary.startStep).toBe(6);

    const ma = readMetrics(path.join(dir, 'a', 'metrics.jsonl'));
    const mb = readMetrics(path.join(dir, 'b', 'metrics.jsonl'));
    expect(mb.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(mb.map((r) => [r.loss, r.lr, r.grad_norm, r.tokens_seen, r.val_loss])).toEqual(
      ma.map((r) => [r.loss, r.lr, r.grad_norm, r.tokens_seen, r.val_loss]),
    );
    const wa = a.model.getWeights();
    const wb = b2.model.getWeights();
    for (const [k, v] of wa) expect(bytes(wb.get(k)!).equals(bytes(v))).toBe(true);
    // The loss went down on this learnable stream.
    expect(ma[ma.length - 1].loss).toBeLessThan(ma[0].loss * 0.9);
    // Checkpoints 9 and 10 kept (keep_last 2).
    expect(listCheckpoints(path.join(dir, 'a')).map((c) => c.step)).toEqual([9, 10]);
  });

  it('refuses to overwrite a run without --resume, and to resume with a different model or batch layout', async () => {
    const runDir = path.join(dir, 'r');
    await train(deps(), { runDir, train: trainCfg({ steps: 3 }), optim: optimCfg, resume: false, quiet: true });
    await expect(train(deps(), { runDir, train: trainCfg({ steps: 3 }), optim: optimCfg, resume: false, quiet: true })).rejects.toThrow(
      /already holds a run: pass --resume/,
    );
    const changed = deps({ config: { model: { v: V }, train: { seed: 4, micro_batch_size: 5, grad_accum: 2 } } });
    await expect(train(changed, { runDir, train: trainCfg({ steps: 6 }), optim: optimCfg, resume: true, quiet: true })).rejects.toThrow(
      /config field "train.micro_batch_size" differs/,
    );
    // Extending the run (more steps) is allowed.
    const s = await train(deps(), { runDir, train: trainCfg({ steps: 5 }), optim: optimCfg, resume: true, quiet: true });
    expect([s.startStep, s.endStep]).toEqual([3, 5]);
  });

  it('skips NaN steps, counts them, and stops after max_bad_steps in a row', async () => {
    const d = deps();
    d.model.params[1].variable.assign(tf.fill([8], NaN));
    const runDir = path.join(dir, 'nan');
    await expect(
      train(d, { runDir, train: trainCfg({ max_bad_steps: 3 }), optim: optimCfg, resume: false, quiet: true }),
    ).rejects.toThrow(/3 steps in a row had a NaN\/Inf loss/);
    const m = readMetrics(path.join(runDir, 'metrics.jsonl'));
    expect(m.map((r) => r.skipped)).toEqual([true, true, true]);
    // No checkpoint is written by a step that trips the guard (step 3 would have been one).
    expect(listCheckpoints(runDir)).toEqual([]);
  });
});

describe('a crash inside a checkpoint write', () => {
  let reference: Map<string, { shape: number[]; data: Float32Array }>;
  let refDir: string;
  beforeAll(async () => {
    refDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-ref-'));
    const d = deps();
    await train(d, { runDir: refDir, train: trainCfg(), optim: optimCfg, resume: false, quiet: true });
    reference = d.model.getWeights();
  });
  afterAll(() => {
    fs.rmSync(refDir, { recursive: true, force: true });
    delete process.env.NDBG_FAULT_CHECKPOINT;
    delete process.env.NDBG_FAULT_ACTION;
  });

  // Checkpoints at 3, 6, 9, 10 (keep_last 2): step 9's write is the first that prunes (step 3).
  it.each(FAULT_POINTS.map((p) => [p]))('never leaves the run unresumable: fault at %s', async (point) => {
    const step = point === 'pruning' ? 9 : 6;
    const runDir = path.join(dir, 'f');
    process.env.NDBG_FAULT_CHECKPOINT = `${point}@${step}`;
    process.env.NDBG_FAULT_ACTION = 'throw';
    try {
      await expect(train(deps(), { runDir, train: trainCfg(), optim: optimCfg, resume: false, quiet: true })).rejects.toBeInstanceOf(InjectedFault);
    } finally {
      delete process.env.NDBG_FAULT_CHECKPOINT;
      delete process.env.NDBG_FAULT_ACTION;
    }
    const before = ['tmp-created', 'weights-written', 'optimizer-written', 'marker-written'].includes(point);
    expect(latestCheckpoint(runDir)!.step).toBe(before ? 3 : step);
    if (point === 'pruning') expect(fs.readdirSync(checkpointsRoot(runDir)).some((e) => e.startsWith('.del-'))).toBe(true);
    const d = deps({ initSeed: 5 });
    const s = await train(d, { runDir, train: trainCfg(), optim: optimCfg, resume: true, quiet: true });
    expect(s.endStep).toBe(10);
    for (const [k, v] of reference) expect(bytes(d.model.getWeights().get(k)!).equals(bytes(v))).toBe(true);
    expect(fs.readdirSync(checkpointsRoot(runDir)).filter((e) => e.startsWith('.'))).toEqual([]);
    expect(readMetrics(path.join(runDir, 'metrics.jsonl')).map((r) => r.loss)).toEqual(
      readMetrics(path.join(refDir, 'metrics.jsonl')).map((r) => r.loss),
    );
  });
});

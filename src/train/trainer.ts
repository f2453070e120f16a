import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { Progress } from '../util/progress';
import { Rng } from '../util/rng';
import { AdamW, decayRule } from './adamw';
import { latestCheckpoint, pruneCheckpoints, writeCheckpointDir } from './checkpoint_dir';
import type { OptimConfig, TrainConfig } from './config';
import { replaceFileAtomic } from '../util/fsync';
import { MetricsLog, MetricsRecord, truncateMetrics } from './metrics';
import { lrAt } from './schedule';
import { TrainerState, packCheckpoint, unpackCheckpoint } from './state';
import { evalLoss, trainStep } from './step';
import type { TokenBatch } from '../data/batch';
import type { BatchStream, TrainableModel } from './types';

/**
 * The training loop: batches → step → metrics → validation → checkpoint, resumable exactly.
 *
 * Exactness rests on: the schedule being a function of the step; the data stream being restored
 * from its saved state; weights and AdamW moments saved as raw float32; the RNG state saved; and
 * metrics lines after the checkpoint dropped on resume (they are recomputed identically).
 */
export interface TrainerDeps {
  model: TrainableModel;
  /** A fresh train stream, or one restored from a checkpoint's data_state. */
  openTrainStream(state?: unknown): BatchStream;
  /** The fixed validation batches (same every evaluation); empty when there is no val split. */
  validationBatches(count: number): TokenBatch[];
  backend: string;
  /** The whole resolved run config, saved as config.json in the run dir and every checkpoint. */
  resolvedConfig: Record<string, unknown>;
  tokenizer: unknown;
}

export interface TrainOptions {
  runDir: string;
  train: TrainConfig;
  optim: OptimConfig;
  resume: boolean;
  quiet?: boolean;
  log?: (line: string) => void;
}

export interface TrainSummary {
  startStep: number;
  endStep: number;
  finalLoss: number;
  lastValLoss?: number;
  /** Wall seconds of the loop, of forward+backward+optimizer, of validation and of checkpoints. */
  loopSeconds: number;
  computeSeconds: number;
  evalSeconds: number;
  checkpointSeconds: number;
  tokens: number;
  stoppedBySignal: boolean;
}

export async function train(deps: TrainerDeps, o: TrainOptions): Promise<TrainSummary> {
  const log = o.log ?? ((s: string) => process.stderr.write(s + '\n'));
  const { model } = deps;
  const tc = o.train;
  fs.mkdirSync(o.runDir, { recursive: true });
  const metricsFile = path.join(o.runDir, 'metrics.jsonl');

  const isDecayed = decayRule(o.optim.no_decay, o.optim.decay_vectors);
  const opt = new AdamW(
    model.params.map((p) => ({ name: p.name, variable: p.variable, decay: isDecayed(p.name, p.variable.shape) })),
    { beta1: o.optim.beta1, beta2: o.optim.beta2, eps: o.optim.eps, weightDecay: o.optim.weight_decay },
  );

  let step = 0;
  let tokensSeen = 0;
  let badInARow = 0;
  let badTotal = 0;
  let elapsedBefore = 0;
  let rng = Rng.from(tc.seed, 'train');
  let stream: BatchStream;

  const latest = latestCheckpoint(o.runDir);
  if (o.resume && latest) {
    const ck = unpackCheckpoint(latest.dir);
    checkResumable(ck.config as Record<string, unknown>, deps.resolvedConfig, latest.dir);
    model.setWeights(new Map([...ck.weights].map(([k, v]) => [k, v.data])));
    opt.restore(ck.optimizer);
    step = ck.state.step;
    tokensSeen = ck.state.tokens_seen;
    badInARow = ck.state.bad_steps_in_a_row;
    badTotal = ck.state.bad_steps_total;
    elapsedBefore = ck.state.elapsed_s;
    rng = Rng.fromState(ck.state.rng_state);
    stream = deps.openTrainStream(ck.state.data_state);
    truncateMetrics(metricsFile, step);
    log(`resuming from ${latest.dir} (step ${step})`);
  } else {
    if (!o.resume && (latest || fs.existsSync(metricsFile))) {
      throw new UserError(`${o.runDir} already holds a run: pass --resume to continue it, or choose another --out`);
    }
    if (o.resume) log(`no complete checkpoint in ${o.runDir}: starting from step 0`);
    if (fs.existsSync(metricsFile)) truncateMetrics(metricsFile, 0);
    stream = deps.openTrainStream();
  }
  replaceFileAtomic(path.join(o.runDir, 'config.json'), JSON.stringify(deps.resolvedConfig, null, 2) + '\n');

  const valBatches = tc.eval_every > 0 ? deps.validationBatches(tc.eval_batches) : [];
  const metrics = new MetricsLog(metricsFile, { tensorboard: tc.tensorboard });
  // With a time budget the number of steps is known only after calibration: no fixed total then.
  const progress = new Progress('train', tc.max_minutes === null ? tc.steps - step : undefined, process.stderr, o.quiet ?? false);
  const startStep = step;
  let ticked = step;
  // The schedule's horizon: tc.steps, or fewer when a time budget allows fewer (see fitHorizon).
  let horizon = tc.steps;
  const budgetS = tc.max_minutes === null ? Infinity : tc.max_minutes * 60;
  // The first step pays one-off costs (kernel setup, shard loading): the pace is timed after it.
  let firstStepDone = 0;
  // When the horizon was first fitted (0: not yet; -1: fitted twice, final).
  let calibratedAt = 0;
  const loopStart = performance.now();
  let computeS = 0;
  let evalS = 0;
  let ckptS = 0;
  let lastLoss = NaN;
  let lastVal: number | undefined;
  let stopRequested = false;
  const onSignal = () => {
    stopRequested = true;
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  const checkpoint = (): void => {
    const t0 = performance.now();
    const state: TrainerState = {
      format: 'ndbg-train-state/1',
      step,
      optimizer_t: opt.step,
      schedule: { kind: o.optim.schedule.kind, position: step, next_lr: lrAt(o.optim.schedule, step, horizon) },
      tokens_seen: tokensSeen,
      bad_steps_in_a_row: badInARow,
      bad_steps_total: badTotal,
      data_state: stream.state(),
      rng_state: rng.state(),
      elapsed_s: elapsedBefore + (performance.now() - loopStart) / 1000,
      tokenizer: deps.tokenizer,
    };
    const weights = new Map<string, { shape: number[]; data: Float32Array }>();
    const raw = model.getWeights();
    for (const p of model.params) weights.set(p.name, { shape: p.variable.shape, data: raw.get(p.name)! });
    const files = packCheckpoint({ weights, optimizer: opt.state(), state, config: deps.resolvedConfig });
    writeCheckpointDir(o.runDir, step, files);
    pruneCheckpoints(o.runDir, tc.keep_last, tc.keep_every, step);
    ckptS += (performance.now() - t0) / 1000;
  };

  try {
    while (step < horizon && !stopRequested) {
      const t0 = performance.now();
      const micro: TokenBatch[] = [];
      for (let i = 0; i < tc.grad_accum; i++) micro.push(await stream.next());
      const lr = lrAt(o.optim.schedule, step, horizon);
      const tc0 = performance.now();
      const res = trainStep(model, opt, micro, { lr, gradClip: o.optim.grad_clip });
      const tc1 = performance.now();
      computeS += (tc1 - tc0) / 1000;
      step += 1;
      tokensSeen += res.tokens;
      lastLoss = res.loss;
      if (res.skipped) {
        badInARow += 1;
        badTotal += 1;
      } else badInARow = 0;

      let valLoss: number | undefined;
      if (valBatches.length && (step % tc.eval_every === 0 || step === horizon)) {
        const te = performance.now();
        valLoss = evalLoss(model, valBatches).loss;
        lastVal = valLoss;
        evalS += (performance.now() - te) / 1000;
      }
      const stepS = (tc1 - t0) / 1000;
      const tokPerS = res.tokens / stepS;
      const rec: MetricsRecord = {
        step,
        loss: res.loss,
        lr,
        grad_norm: res.gradNorm,
        tokens: res.tokens,
        tokens_per_s: tokPerS,
        tokens_seen: tokensSeen,
        backend: deps.backend,
        step_s: stepS,
        compute_s: (tc1 - tc0) / 1000,
        elapsed_s: elapsedBefore + (performance.now() - loopStart) / 1000,
      };
      if (tc.peak_flops > 0 && model.flopsPerToken > 0) rec.mfu = (model.flopsPerToken * tokPerS) / tc.peak_flops;
      if (res.skipped) rec.skipped = true;
      if (valLoss !== undefined) rec.val_loss = valLoss;
      metrics.write(rec);
      if (step % tc.log_every === 0 || step === horizon) {
        progress.tick(step - ticked, progressFields(rec, model.flopsPerToken));
        ticked = step;
      }

      if (badInARow >= tc.max_bad_steps) {
        throw new UserError(
          `stopping: ${badInARow} steps in a row had a NaN/Inf loss or gradient (train.max_bad_steps=${tc.max_bad_steps}); ` +
            `the last complete checkpoint is intact — lower optim.schedule.peak_lr or check the data`,
        );
      }
      if (budgetS !== Infinity) {
        const now = performance.now();
        const spent = (now - loopStart) / 1000;
        if (step === startStep + 1) firstStepDone = now;
        // Fit the horizon after a short calibration, then once more at a quarter of the run with
        // the steady pace (the first steps are slower: kernel setup, first shard loads).
        const refitAt = startStep + Math.max(2 * BUDGET_CALIBRATION_STEPS, Math.round((horizon - startStep) / 4));
        if (step === startStep + BUDGET_CALIBRATION_STEPS || (calibratedAt > 0 && step === refitAt)) {
          const since = calibratedAt > 0 ? calibratedAt : firstStepDone;
          const sinceStep = calibratedAt > 0 ? startStep + BUDGET_CALIBRATION_STEPS : startStep + 1;
          const pace = (now - since) / 1000 / (step - sinceStep);
          horizon = fitHorizon(step, tc.steps, pace, budgetS - spent);
          if (calibratedAt === 0) calibratedAt = now;
          else calibratedAt = -1; // fitted twice: keep this horizon
          progress.setTotal(horizon - startStep);
          log(`time budget ${tc.max_minutes} min: training for ${horizon} steps (schedule horizon)`);
        } else if (spent >= budgetS && step < horizon) {
          horizon = step;
          log(`time budget ${tc.max_minutes} min reached at step ${step}`);
        }
      }
      const periodic = tc.checkpoint_every > 0 && step % tc.checkpoint_every === 0;
      if (periodic || step === horizon || stopRequested) checkpoint();
    }
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    metrics.close();
    opt.dispose();
  }
  progress.finish();
  if (stopRequested && step < tc.steps) log(`stopped by signal at step ${step}; checkpoint written, continue with --resume`);
  return {
    startStep,
    endStep: step,
    finalLoss: lastLoss,
    lastValLoss: lastVal,
    loopSeconds: (performance.now() - loopStart) / 1000,
    computeSeconds: computeS,
    evalSeconds: evalS,
    checkpointSeconds: ckptS,
    tokens: tokensSeen,
    stoppedBySignal: stopRequested && step < tc.steps,
  };
}

/**
 * Steps timed before a time budget fixes the schedule's horizon. Warmup LRs do not depend on the
 * horizon, so with warmup_steps ≥ this the schedule is the one a fixed-step run would have used.
 */
const BUDGET_CALIBRATION_STEPS = 20;

/** The last step that fits the remaining time at the measured pace (never beyond maxSteps). */
export function fitHorizon(step: number, maxSteps: number, secondsPerStep: number, remainingS: number): number {
  return Math.min(maxSteps, step + Math.max(0, Math.floor(remainingS / Math.max(secondsPerStep, 1e-9))));
}

function progressFields(r: MetricsRecord, flopsPerToken: number): Record<string, string | number> {
  const f: Record<string, string | number> = {
    step: r.step,
    loss: r.loss.toFixed(4),
    lr: r.lr.toExponential(2),
    'tok/s': Math.round(r.tokens_per_s),
  };
  if (r.mfu !== undefined) f.mfu = `${(100 * r.mfu).toFixed(1)}%`;
  else if (flopsPerToken > 0) f.gflops = ((flopsPerToken * r.tokens_per_s) / 1e9).toFixed(2);
  if (r.val_loss !== undefined) f.val = r.val_loss.toFixed(4);
  return f;
}

/**
 * A checkpoint may be resumed only under the same model, data, optimizer and batch layout;
 * train.steps, logging, checkpoint and eval cadence may change (e.g. to extend a run).
 */
function checkResumable(saved: Record<string, unknown>, now: Record<string, unknown>, dir: string): void {
  const fields = ['model', 'data', 'optim', 'train.seed', 'train.micro_batch_size', 'train.grad_accum'];
  for (const f of fields) {
    const get = (o: Record<string, unknown>) => f.split('.').reduce<unknown>((x, k) => (x as Record<string, unknown>)?.[k], o);
    if (JSON.stringify(get(saved)) !== JSON.stringify(get(now))) {
      throw new UserError(
        `cannot resume from ${dir}: config field "${f}" differs from the checkpoint's (${path.join(dir, 'config.json')}); ` +
          `resume with the same value or start a new --out`,
      );
    }
  }
}

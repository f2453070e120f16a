import * as fs from 'fs';
import * as path from 'path';
import type { TokenBatch } from '../data/batch';
import { UserError } from '../util/errors';
import { replaceFileAtomic } from '../util/fsync';
import { Progress } from '../util/progress';
import { makeOptimizer, type Optimizer } from './optimizer';
import { latestCheckpoint, pruneCheckpoints, writeCheckpointDir } from './checkpoint_dir';
import type { OptimConfig, TrainConfig } from './config';
import { maybeKillAfterStep } from './fault';
import { MetricsLog, MetricsRecord, truncateMetrics } from './metrics';
import { CHECKPOINT_SEQ_LEN_KEY } from '../model/checkpoint';
import { lrAt } from './schedule';
import { TrainerState, packCheckpoint, unpackCheckpoint } from './state';
import { evalLoss, trainStep, type StepResult } from './step';
import { PaceEstimate, TimeBudget } from './time_budget';
import type { BatchStream, TrainableModel } from './types';

/**
 * The training loop: batch → step → metrics → validation → checkpoint, resumable exactly.
 *
 * Exactness rests on: the schedule being a function of the step; the data stream being restored
 * from its saved state; weights and optimizer buffers saved as raw float32; and metrics lines after
 * the checkpoint dropped on resume (they are recomputed identically). Nothing in the loop draws
 * random numbers (the data order is the loader's, keyed by train.seed), so no RNG is saved.
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
  /** Tokens trained on before this process (those of the resumed checkpoint; 0 on a fresh run). */
  startTokens: number;
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

/** What a checkpoint saves of the loop besides weights, moments and the data stream. */
interface Counters {
  step: number;
  tokensSeen: number;
  badInARow: number;
  badTotal: number;
  /** Training seconds of earlier processes of this run (before the resumed checkpoint). */
  elapsedBefore: number;
}

export async function train(deps: TrainerDeps, o: TrainOptions): Promise<TrainSummary> {
  const log = o.log ?? ((s: string) => process.stderr.write(s + '\n'));
  const { model } = deps;
  const cfg = o.train;
  const metricsFile = path.join(o.runDir, 'metrics.jsonl');
  fs.mkdirSync(o.runDir, { recursive: true });
  const opt = makeOptimizer(model, o.optim);
  log(`optimizer: ${opt.describe()}`);
  const { c, stream } = startOrResume(deps, o, opt, metricsFile, log);
  replaceFileAtomic(path.join(o.runDir, 'config.json'), JSON.stringify(deps.resolvedConfig, null, 2) + '\n');

  const valBatches = cfg.eval_every > 0 ? deps.validationBatches(cfg.eval_batches) : [];
  // metrics.jsonl, and with train.tensorboard event files beside it (src/train/tensorboard.ts).
  const metrics = new MetricsLog(metricsFile, { tensorboard: cfg.tensorboard });
  const loopStart = performance.now();
  const elapsed = () => c.elapsedBefore + (performance.now() - loopStart) / 1000;
  const budget = new TimeBudget(cfg.max_minutes, cfg.steps, c.step, loopStart);
  // A step budget says early how long it will take here (a time budget says its step count).
  const pace = cfg.max_minutes === null ? new PaceEstimate(cfg.steps, c.step) : undefined;
  // With a time budget the number of steps is known only after calibration: no total until then.
  const bar = new Progress('train', cfg.max_minutes === null ? cfg.steps - c.step : undefined, process.stderr, o.quiet ?? false);
  const startStep = c.step;
  const startTokens = c.tokensSeen;
  const seconds = { compute: 0, eval: 0, checkpoint: 0 };
  let last: StepResult | undefined;
  let lastVal: number | undefined;
  const stop = stopOnSignal();
  try {
    while (c.step < budget.horizon && !stop.requested) {
      // batch
      const stepStart = performance.now();
      const micro: TokenBatch[] = [];
      for (let i = 0; i < cfg.grad_accum; i++) micro.push(stream.next());
      // step
      const lr = lrAt(o.optim.schedule, c.step, budget.horizon);
      const computeStart = performance.now();
      last = trainStep(model, opt, micro, { lr, gradClip: o.optim.grad_clip });
      const stepEnd = performance.now();
      seconds.compute += (stepEnd - computeStart) / 1000;
      countStep(c, last);
      // eval
      const evalDue = valBatches.length > 0 && (c.step % cfg.eval_every === 0 || c.step === budget.horizon);
      const valLoss = evalDue ? (lastVal = timed(seconds, 'eval', () => evalLoss(model, valBatches).loss)) : undefined;
      // metrics
      const rec = metricsRecord(c, last, { lr, valLoss, backend: deps.backend, stepS: (stepEnd - stepStart) / 1000, computeS: (stepEnd - computeStart) / 1000, elapsedS: elapsed() });
      if (cfg.peak_flops > 0 && model.flopsPerToken > 0) rec.mfu = (model.flopsPerToken * rec.tokens_per_s) / cfg.peak_flops;
      metrics.write(rec);
      maybeKillAfterStep(c.step); // crash tests only (fault.ts)
      if (c.step % cfg.log_every === 0 || c.step === budget.horizon) bar.tick(c.step - startStep - bar.count, progressFields(rec, model.flopsPerToken));
      checkBadSteps(c, cfg);

      // time budget
      budgetAfterStep(budget, pace, c, { bar, startStep, log });

      // A step never yields, and Node runs a signal's listener only between turns of the event
      // loop: without this turn Ctrl-C and SIGTERM would wait for the whole run. It comes before
      // the checkpoint so that a stop asked for during this step writes one here.
      await nextTurn();

      // checkpoint
      const periodic = cfg.checkpoint_every > 0 && c.step % cfg.checkpoint_every === 0;
      if (periodic || c.step === budget.horizon || stop.requested) {
        timed(seconds, 'checkpoint', () => saveCheckpoint(deps, o, opt, c, stream, { horizon: budget.horizon, elapsedS: elapsed() }));
      }
    }
  } finally {
    stop.dispose();
    metrics.close();
    opt.dispose();
  }
  bar.finish();
  const stoppedBySignal = stop.requested && c.step < cfg.steps;
  if (stoppedBySignal) log(`stopped by signal at step ${c.step}; checkpoint written, continue with --resume`);
  return {
    startStep,
    startTokens,
    endStep: c.step,
    finalLoss: last?.loss ?? NaN,
    lastValLoss: lastVal,
    loopSeconds: (performance.now() - loopStart) / 1000,
    computeSeconds: seconds.compute,
    evalSeconds: seconds.eval,
    checkpointSeconds: seconds.checkpoint,
    tokens: c.tokensSeen,
    stoppedBySignal,
  };
}

/** The time budget's calibration and the step budget's time estimate after a step, each logged once. */
function budgetAfterStep(budget: TimeBudget, pace: PaceEstimate | undefined, c: Counters, o: { bar: Progress; startStep: number; log: (s: string) => void }): void {
  const now = performance.now();
  const change = budget.afterStep(c.step, now);
  if (change) o.log(change.message);
  if (change?.kind === 'fitted') o.bar.setTotal(change.horizon - o.startStep);
  const estimate = pace?.afterStep(c.step, c.tokensSeen, now);
  if (estimate) o.log(estimate);
}

/** fn(), its wall seconds added to seconds[what]. */
function timed<T>(seconds: Record<'eval' | 'checkpoint', number>, what: 'eval' | 'checkpoint', fn: () => T): T {
  const start = performance.now();
  try {
    return fn();
  } finally {
    seconds[what] += (performance.now() - start) / 1000;
  }
}

/** A fresh run (refusing to overwrite one) or the latest complete checkpoint restored into model and optimizer. */
function startOrResume(deps: TrainerDeps, o: TrainOptions, opt: Optimizer, metricsFile: string, log: (s: string) => void): { c: Counters; stream: BatchStream } {
  const latest = latestCheckpoint(o.runDir);
  if (o.resume && latest) {
    const ck = unpackCheckpoint(latest.dir);
    checkResumable(ck.config as Record<string, unknown>, deps.resolvedConfig, latest.dir);
    deps.model.setWeights(ck.weights);
    opt.restore(ck.optimizer);
    const s = ck.state;
    truncateMetrics(metricsFile, s.step);
    log(`resuming from ${latest.dir} (step ${s.step})`);
    const c = { step: s.step, tokensSeen: s.tokens_seen, badInARow: s.bad_steps_in_a_row, badTotal: s.bad_steps_total, elapsedBefore: s.elapsed_s };
    return { c, stream: deps.openTrainStream(s.data_state) };
  }
  if (!o.resume && (latest || fs.existsSync(metricsFile))) {
    throw new UserError(`${o.runDir} already holds a run: pass --resume to continue it, or choose another --out`);
  }
  if (o.resume) log(`no complete checkpoint in ${o.runDir}: starting from step 0`);
  if (fs.existsSync(metricsFile)) truncateMetrics(metricsFile, 0);
  return { c: { step: 0, tokensSeen: 0, badInARow: 0, badTotal: 0, elapsedBefore: 0 }, stream: deps.openTrainStream() };
}

function countStep(c: Counters, r: StepResult): void {
  c.step += 1;
  c.tokensSeen += r.tokens;
  c.badInARow = r.skipped ? c.badInARow + 1 : 0;
  if (r.skipped) c.badTotal += 1;
}

function checkBadSteps(c: Counters, cfg: TrainConfig): void {
  if (c.badInARow < cfg.max_bad_steps) return;
  throw new UserError(
    `stopping: ${c.badInARow} steps in a row had a NaN/Inf loss or gradient (train.max_bad_steps=${cfg.max_bad_steps}); ` +
      `the last complete checkpoint is intact — lower optim.schedule.peak_lr or check the data`,
  );
}

function metricsRecord(
  c: Counters,
  r: StepResult,
  m: { lr: number; valLoss?: number; backend: string; stepS: number; computeS: number; elapsedS: number },
): MetricsRecord {
  const rec: MetricsRecord = {
    step: c.step,
    loss: r.loss,
    lr: m.lr,
    grad_norm: r.gradNorm,
    tokens: r.tokens,
    tokens_per_s: r.tokens / m.stepS,
    tokens_seen: c.tokensSeen,
    backend: m.backend,
    step_s: m.stepS,
    compute_s: m.computeS,
    elapsed_s: m.elapsedS,
  };
  if (r.skipped) rec.skipped = true;
  if (m.valLoss !== undefined) rec.val_loss = m.valLoss;
  return rec;
}

function saveCheckpoint(deps: TrainerDeps, o: TrainOptions, opt: Optimizer, c: Counters, stream: BatchStream, at: { horizon: number; elapsedS: number }): void {
  const state: TrainerState = {
    format: 'ndbg-train-state/1',
    step: c.step,
    optimizer_t: opt.step,
    schedule: { kind: o.optim.schedule.kind, position: c.step, next_lr: lrAt(o.optim.schedule, c.step, at.horizon) },
    tokens_seen: c.tokensSeen,
    bad_steps_in_a_row: c.badInARow,
    bad_steps_total: c.badTotal,
    data_state: stream.state(),
    elapsed_s: at.elapsedS,
    tokenizer: deps.tokenizer,
  };
  writeCheckpointDir(o.runDir, c.step, packCheckpoint({ weights: deps.model.getWeights(), optimizer: opt.state(), state, config: deps.resolvedConfig }));
  pruneCheckpoints(o.runDir, Math.max(o.train.keep_last, o.train.average_last), o.train.keep_every, c.step, o.train.checkpoint_every);
}

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** SIGINT/SIGTERM ask the loop to stop after the current step (with a checkpoint). */
function stopOnSignal(): { readonly requested: boolean; dispose(): void } {
  const flag = { requested: false };
  const on = () => {
    flag.requested = true;
  };
  process.once('SIGINT', on);
  process.once('SIGTERM', on);
  return {
    get requested() {
      return flag.requested;
    },
    dispose() {
      process.removeListener('SIGINT', on);
      process.removeListener('SIGTERM', on);
    },
  };
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
  const fields = ['model', 'data', 'optim', 'train.seed', 'train.micro_batch_size', 'train.grad_accum', CHECKPOINT_SEQ_LEN_KEY];
  for (const f of fields) {
    const get = (o: Record<string, unknown>) => f.split('.').reduce<unknown>((x, k) => (x as Record<string, unknown>)?.[k], o);
    // Checkpoints written before the context was recorded have no seq_len to compare.
    if (get(saved) === undefined && f === CHECKPOINT_SEQ_LEN_KEY) continue;
    if (JSON.stringify(get(saved)) !== JSON.stringify(get(now))) {
      throw new UserError(
        `cannot resume from ${dir}: config field "${f}" differs from the checkpoint's (${path.join(dir, 'config.json')}); ` +
          `resume with the same value or start a new --out`,
      );
    }
  }
}

/**
 * `ndbg quickstart`: the main job end to end on embedded defaults, each stage calling the same
 * library function as its own command and writing its output under one directory:
 *
 *   1 programs   generate + filter synthetic programs, split by program   programs/{train,validation,test}.jsonl
 *   2 trace      sandboxed traces of the train and test programs          traces/{train,test}.jsonl
 *   3 ndl        sampled NDL documents that fit the context                ndl/train.jsonl
 *   4 code       Python standard library source as the code source         code/stdlib.jsonl
 *   5 data       tokenize + pack an Arrow mixture                          data/
 *   6 train      the tiny config within the time budget                    run/ (checkpoints, metrics)
 *   7 eval       next-state accuracy on held-out programs vs the baseline  run/eval/next_state.json
 *   8 report     the HTML report                                           run/report.html
 *   9 debug      a scripted `ndbg debug --verify` session                  debug-session.txt
 *
 * Stages 1–5 live in quickstart_data.ts; stages 6–7 are `trainAndEvaluate`, which the learning
 * benchmark calls once per time budget on one data set.
 */
import * as fs from 'fs';
import * as path from 'path';
import { NaiveBaseline } from '../eval/baseline';
import { CompleterPredictor, type TextCompleter } from '../eval/completer';
import { copyProbeOf, formatCopyProbe, modelLogProbs, type CopyProbeResult } from '../eval/copy_probe';
import { formatSrcTokenAccuracy, readNdlTexts, srcTokenAccuracy, type SrcTokenAccuracy } from '../eval/src_tokens';
import { loadModelCompleter, writeJson } from '../eval/load';
import { FREE_SRC_NAME } from '../eval/model_completer';
import { evaluateNextState, formatTables, NextStateResult, nextStateReport, ratesOf } from '../eval/next_state';
import { DebugSession } from '../eval/session';
import { ALL_ACTIONS, makeTasks } from '../eval/tasks';
import { renderReport } from '../train/report';
import { listCheckpoints } from '../train/checkpoint_dir';
import { readMetrics } from '../train/metrics';
import { trainFromConfig } from '../train/run';
import { traceProgram } from '../trace';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { assetPath } from '../util/paths';
import { prepareQuickstartData, type QuickstartData } from './quickstart_data';
import { done, pct, stage, type QuickstartOptions, type StageSeconds } from './quickstart_options';

export { QUICKSTART_DEFAULTS, type QuickstartOptions } from './quickstart_options';

/** What a training run of the recipe was: where it went, how far it got. */
export interface TrainedRun {
  runDir: string;
  checkpoint: string;
  backend: string;
  steps: number;
  tokens: number;
  firstLoss: number;
  lastLoss: number;
}

export interface QuickstartResult extends TrainedRun {
  dir: string;
  nextState: NextStateResult['tables'];
  /** Share of NDL documents and of eval tasks that fit the model's context. */
  fit: { documents: number; tasks: number };
  seconds: StageSeconds;
}

function readLosses(runDir: string): number[] {
  return readMetrics(path.join(runDir, 'metrics.jsonl'))
    .map((m) => m.loss)
    .filter(Number.isFinite);
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
}

export interface TrainedAndEvaluated extends TrainedRun {
  completer: TextCompleter;
  result: NextStateResult;
  copyProbe: CopyProbeResult;
  srcTokens: SrcTokenAccuracy;
  /** Eval tasks scored, and drawn but not fitting the context. */
  tasks: { scored: number; didNotFit: number };
}

/** Stages 6–7: train the quickstart recipe for `minutes` into runDir, then the next-state eval. */
export async function trainAndEvaluate(o: QuickstartOptions, data: QuickstartData, runDir: string, minutes: number, seconds: StageSeconds): Promise<TrainedAndEvaluated> {
  let t = Date.now();
  stage(6, 'train', `${o.config} for up to ${minutes} min (backend ${o.backend})`);
  const trained = await trainFromConfig({
    config: o.config,
    overrides: [
      `data.datasets=${JSON.stringify([data.dataDir])}`,
      'data.weights={"ndl": 0.9, "code": 0.1}',
      `train.steps=${o.steps}`,
      `train.max_minutes=${minutes}`,
      `train.backend=${o.backend}`,
      `train.seed=${o.seed}`,
      ...o.set,
    ],
    runDir,
    resume: false,
  });
  const losses = readLosses(runDir);
  const window = Math.max(1, Math.min(10, Math.floor(losses.length / 4)));
  const firstLoss = mean(losses.slice(0, window));
  const lastLoss = mean(losses.slice(-window));
  const checkpoints = listCheckpoints(runDir);
  if (checkpoints.length === 0) throw new Error(`quickstart: training wrote no checkpoint under ${runDir}`);
  const checkpoint = checkpoints[checkpoints.length - 1].dir;
  const rate = trained.tokens / Math.max(trained.loopSeconds, 1e-9);
  done(`${runDir}: ${losses.length} steps on ${trained.backend} (${Math.round(rate)} tokens/s, ${trained.tokens} tokens), loss ${firstLoss.toFixed(3)} -> ${lastLoss.toFixed(3)}; checkpoint ${checkpoint}`, t, seconds, 'train');

  t = Date.now();
  const testTraces: TraceRecord[] = data.testTraces;
  stage(7, 'eval', `next-state accuracy on ${testTraces.length} held-out programs, every action, SRC constrained and free, beside the naive baseline`);
  const completer = await loadModelCompleter({ checkpoint, backend: o.backend as never });
  const { tasks, didNotFit } = makeTasks(testTraces, ALL_ACTIONS, { seed: o.seed, perProgram: 1, budget: completer.budget });
  const notFitting = Object.values(didNotFit).reduce((a, b) => a + b, 0);
  process.stderr.write(`      ${tasks.length} tasks; ${pct(tasks.length, tasks.length + notFitting)} fit the context (${notFitting} did_not_fit, not scored)\n`);
  // The model as shipped (SRC constrained to program lines) and decoding freely, side by side.
  const free = completer.withSrcConstraint(false);
  const result = await evaluateNextState(tasks, [new CompleterPredictor(completer), new CompleterPredictor(free), new NaiveBaseline()], { didNotFit });
  const evalDir = path.join(runDir, 'eval');
  fs.mkdirSync(evalDir, { recursive: true });
  writeJson(path.join(evalDir, 'next_state.json'), nextStateReport(result, completer.name, { programs: testTraces.length, tasks: tasks.length }));
  process.stderr.write(`${formatTables(result.tables)}\n`);
  // Whether the model copies from its context at all (induction heads): what SRC accuracy needs.
  const probe = copyProbeOf(completer.model, completer.tokenizer);
  // How close it is to copying lines: moves long before exact-match SRC does (docs/eval.md).
  const srcTokens = srcTokenAccuracy(modelLogProbs(completer.model), completer.tokenizer, await readNdlTexts(data.testDocuments, Infinity), completer.model.config.max_seq_len);
  writeJson(path.join(evalDir, 'copy_probe.json'), { title: 'Copy probe (induction)', ...probe, srcTokens: { file: data.testDocuments, ...srcTokens } });
  process.stderr.write(`      ${formatCopyProbe(probe)}\n      ${formatSrcTokenAccuracy(srcTokens)}\n`);
  done(path.join(evalDir, 'next_state.json'), t, seconds, 'eval');
  return {
    runDir, checkpoint, backend: trained.backend, steps: losses.length, tokens: trained.tokens, firstLoss, lastLoss, completer, result, copyProbe: probe, srcTokens,
    tasks: { scored: tasks.length, didNotFit: notFitting },
  };
}

const DEBUG_SCRIPT = ['s', 's', 's', 'n', 'n', 'n', 'r', 'c'];

/** Stage 9: the scripted REPL session on examples/count.py, checked against the real run. */
async function scriptedDebugSession(completer: TextCompleter, file: string): Promise<string[]> {
  const code = fs.readFileSync(assetPath('examples/count.py'), 'utf8');
  const call = 'count("berry", "r")';
  const trace = await traceProgram({ id: 'count', code, call });
  const session = new DebugSession({ code, call, completer, trace, direction: 'forward', verify: true });
  const transcript: string[] = [...session.start()];
  for (const cmd of DEBUG_SCRIPT) {
    transcript.push(`(ndbg) ${cmd}`, ...(await session.execute(cmd)).output);
    if (session.finished) break;
  }
  fs.writeFileSync(file, transcript.join('\n') + '\n');
  return transcript;
}

/** Prepares the quickstart's output directory: empty, or refused unless --force. */
export function freshOutputDir(out: string, force: boolean): string {
  const dir = path.resolve(out);
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0 && !force) {
    throw new UserError(`${dir} is not empty; pass --force to replace it or choose another --out`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  for (const sub of ['programs', 'traces', 'ndl', 'code']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  return dir;
}

export async function quickstart(o: QuickstartOptions): Promise<QuickstartResult> {
  const dir = freshOutputDir(o.out, o.force);
  const seconds: StageSeconds = {};
  const total = Date.now();
  const data = await prepareQuickstartData(o, dir, seconds);
  const run = await trainAndEvaluate(o, data, path.join(dir, 'run'), o.minutes, seconds);

  let t = Date.now();
  stage(8, 'report', 'writing the HTML report');
  const reportFile = path.join(run.runDir, 'report.html');
  fs.writeFileSync(reportFile, renderReport(run.runDir));
  done(reportFile, t, seconds, 'report');

  t = Date.now();
  stage(9, 'debug', `a scripted \`ndbg debug --verify\` session on examples/count.py: ${DEBUG_SCRIPT.join(';')}`);
  const transcriptFile = path.join(dir, 'debug-session.txt');
  const transcript = await scriptedDebugSession(run.completer, transcriptFile);
  process.stderr.write(transcript.map((l) => `      ${l}`).join('\n') + '\n');
  done(transcriptFile, t, seconds, 'debug');

  seconds.total = (Date.now() - total) / 1000;
  const fit = {
    documents: data.documents.written / Math.max(data.documents.written + data.documents.tooLong, 1),
    tasks: run.tasks.scored / Math.max(run.tasks.scored + run.tasks.didNotFit, 1),
  };
  const summary: QuickstartResult = {
    dir, runDir: run.runDir, checkpoint: run.checkpoint, backend: run.backend, steps: run.steps, tokens: run.tokens,
    firstLoss: run.firstLoss, lastLoss: run.lastLoss, nextState: run.result.tables, fit, seconds,
  };
  writeJson(path.join(dir, 'quickstart.json'), {
    ...summary,
    nextState: undefined,
    full_match_model: ratesOf(run.result.tables[run.completer.name], 'full'),
    full_match_baseline: ratesOf(run.result.tables.baseline, 'full'),
    src_model: ratesOf(run.result.tables[run.completer.name], 'src'),
    [`full_match_${FREE_SRC_NAME}`]: ratesOf(run.result.tables[FREE_SRC_NAME], 'full'),
    [`src_${FREE_SRC_NAME}`]: ratesOf(run.result.tables[FREE_SRC_NAME], 'src'),
  });
  return summary;
}

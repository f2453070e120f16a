/**
 * `ndbg quickstart`: the main job end to end on embedded defaults, each stage calling the same
 * library function as its own command and writing its output under one directory:
 *
 *   1 programs   generate + filter synthetic programs, split by program   programs/{train,validation,test}.jsonl
 *   2 trace      sandboxed traces of the train and test programs          traces/{train,test}.jsonl
 *   3 ndl        sampled NDL documents that fit the context                ndl/train.jsonl
 *   4 real code  the stdlib's source text as the code source; real functions code/stdlib.jsonl, mined/mined.jsonl,
 *                mined from the stdlib + pinned packages, traced on several  traces/mined-{split}.jsonl,
 *                inputs each, split by function; with --mined-share, NDL     ndl/mined.jsonl (--mined-share)
 *                documents of the training split's calls
 *   5 data       tokenize + pack an Arrow mixture                          data/, quickstart-data.json (--resume reads it)
 *   6 train      the tiny config for a fixed step budget (--minutes: time)   run/ (checkpoints, metrics)
 *   7 eval       next-state accuracy on held-out programs vs the baselines run/eval/next_state.json
 *                (+ samples, scripted sessions, CruxEval with --cruxeval; quickstart_eval.ts)
 *   8 report     the HTML report                                           run/report.html
 *   9 debug      a scripted `ndbg debug --verify` session                  debug-session.txt
 *
 * Stages 1–5 live in quickstart_data.ts; stages 6–7 are `trainAndEvaluate`, which the learning
 * benchmark calls once per time budget on one data set.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { TextCompleter } from '../eval/completer';
import { writeJson } from '../eval/load';
import { FREE_SRC_NAME } from '../eval/model_completer';
import { NextStateResult, ratesOf } from '../eval/next_state';
import { DebugSession } from '../eval/session';
import { renderReport } from '../train/report';
import { listCheckpoints } from '../train/checkpoint_dir';
import { readMetrics } from '../train/metrics';
import { trainFromConfig } from '../train/run';
import { averagedNote } from '../train/average';
import { pinnedPackages } from '../programs/mine_packages';
import { traceProgram } from '../trace';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { describeMachine, formatMachine, type MachineDescription } from '../util/machine';
import { assetPath } from '../util/paths';
import { prepareQuickstartData, type QuickstartData } from './quickstart_data';
import { readDataRecord, writeDataRecord } from './quickstart_record';
import { evaluateRun, type EvalExtras, type RunEvaluation } from './quickstart_eval';
import { ndlEpochs, ndlTrainTokens } from './ndl_epochs';
import { budgetOverrides, describeBudget, quickstartWeights, done, pct, stage, trainBudget, type EvalSplit, type QuickstartOptions, type StageSeconds, type TrainBudget } from './quickstart_options';

export { QUICKSTART_DEFAULTS, type QuickstartOptions } from './quickstart_options';

/** What a training run of the recipe was: where it went, how far it got, on what machine. */
export interface TrainedRun {
  runDir: string;
  checkpoint: string;
  backend: string;
  steps: number;
  /** The step this process resumed training from (--resume), or null for a run from step 0. */
  resumedAt: number | null;
  tokens: number;
  firstLoss: number;
  lastLoss: number;
  /** Steps (the default: the same model everywhere) or minutes (machine-dependent). */
  budget: TrainBudget;
  /** The machine the time figures (tokensPerS, seconds) were measured on. */
  machine: MachineDescription;
  tokensPerS: number;
  /** How many times training read the NDL documents (ndl_epochs.ts). */
  ndlEpochs: number;
}

export interface QuickstartResult extends TrainedRun {
  dir: string;
  /** The split the eval drew from and how many distinct programs it scored. */
  heldOut: { split: EvalSplit; programs: number };
  nextState: NextStateResult['tables'];
  /** Multi-step accuracy in scripted debug sessions on held-out programs. */
  sessions: RunEvaluation['sessions'];
  /** Next-state on the held-out mined real functions. */
  mined: RunEvaluation['mined'];
  /** The real-code section; undefined when no CruxEval file was given. */
  cruxeval?: RunEvaluation['cruxeval'];
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

/** A trained run and its evaluation (stage 7: quickstart_eval.ts). */
export type TrainedAndEvaluated = TrainedRun & RunEvaluation;

/**
 * Stage 6: trains the quickstart recipe into runDir. `minutes` null (the quickstart's default)
 * trains o.steps (or DEFAULT_STEPS) with the LR schedule decaying over exactly those steps, the
 * same model on every machine; a number is a wall-clock budget (the learning bench's points).
 */
export async function trainRecipe(o: QuickstartOptions, data: QuickstartData, runDir: string, minutes: number | null, seconds: StageSeconds): Promise<TrainedRun> {
  const t = Date.now();
  const budget = trainBudget(minutes, o.steps);
  const machine = describeMachine();
  stage(6, 'train', `${o.config} for ${describeBudget(budget)} (backend ${o.backend}; ${formatMachine(machine)})`);
  const trained = await trainFromConfig({
    config: o.config,
    overrides: [
      `data.datasets=${JSON.stringify([data.dataDir])}`,
      // Sources without a share are left out: the data set has no mined source when none is trained on.
      `data.weights=${JSON.stringify(Object.fromEntries(Object.entries(quickstartWeights(o.minedShare)).filter(([, w]) => w > 0)))}`,
      ...budgetOverrides(budget),
      `train.backend=${o.backend}`,
      `train.seed=${o.seed}`,
      ...o.set,
    ],
    runDir,
    resume: o.resume,
  });
  // Ctrl-C or SIGTERM in training stops the quickstart; evaluating a half-trained model would not be its result.
  if (trained.stoppedBySignal) throw new UserError(`quickstart stopped by signal in training at step ${trained.endStep} (its checkpoint is in ${runDir}); continue it with the same command and --resume`, 130);
  const losses = readLosses(runDir);
  const window = Math.max(1, Math.min(10, Math.floor(losses.length / 4)));
  const firstLoss = mean(losses.slice(0, window));
  const lastLoss = mean(losses.slice(-window));
  const checkpoints = listCheckpoints(runDir);
  if (checkpoints.length === 0) throw new Error(`quickstart: training wrote no checkpoint under ${runDir}`);
  // The run's averaged checkpoint where its config asks for one (train.average_last), else its last.
  const checkpoint = trained.averaged?.dir ?? checkpoints[checkpoints.length - 1].dir;
  // This process's pace: a resumed run's earlier tokens were trained in another one.
  const tokensPerS = (trained.tokens - trained.startTokens) / Math.max(trained.loopSeconds, 1e-9);
  const epochs = ndlEpochs(ndlTrainTokens(data.dataDir), trained.tokens, quickstartWeights(o.minedShare).ndl);
  done(`${runDir}: ${losses.length} steps on ${trained.backend} (${Math.round(tokensPerS)} tokens/s, ${trained.tokens} tokens, ${epochs.toFixed(2)} epochs of the NDL documents), loss ${firstLoss.toFixed(3)} -> ${lastLoss.toFixed(3)}; checkpoint ${checkpoint}${averagedNote(checkpoint)}`, t, seconds, 'train');
  return { runDir, checkpoint, backend: trained.backend, steps: losses.length, resumedAt: o.resume ? trained.startStep : null, tokens: trained.tokens, firstLoss, lastLoss, budget, machine, tokensPerS, ndlEpochs: epochs };
}

/** Stages 6–7: train the quickstart recipe into runDir (trainRecipe), then the next-state eval. */
export async function trainAndEvaluate(o: QuickstartOptions & EvalExtras, data: QuickstartData, runDir: string, minutes: number | null, seconds: StageSeconds): Promise<TrainedAndEvaluated> {
  const trained = await trainRecipe(o, data, runDir, minutes, seconds);
  const evaluation = await evaluateRun(o, data, runDir, trained.checkpoint, seconds);
  return { ...trained, ...evaluation };
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
  for (const sub of ['programs', 'traces', 'ndl', 'code', 'mined']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  return dir;
}

/** Stages 1–5: run into a fresh OUT, or with --resume read back from OUT (quickstart_record.ts). */
async function quickstartData(o: QuickstartOptions, seconds: StageSeconds): Promise<{ dir: string; data: QuickstartData }> {
  if (!o.resume) {
    const dir = freshOutputDir(o.out, o.force);
    const data = await prepareQuickstartData(o, dir, seconds);
    writeDataRecord(dir, o, data, seconds);
    return { dir, data };
  }
  if (o.force) throw new UserError('--resume continues the quickstart in --out and --force replaces it: pass one of them');
  const dir = path.resolve(o.out);
  const t = Date.now();
  stage(5, 'data', `reusing stages 1–5 in ${dir} (--resume)`);
  const data = readDataRecord(dir, o, seconds);
  // Its own seconds stay out of `seconds`, which now holds the data stages' recorded ones.
  done(`${data.dataDir}: ${data.testTraces.length} distinct ${data.evalSplit} programs`, t, {}, 'resume');
  return { dir, data };
}

/** Options that a later stage would refuse, refused before any work (and before OUT is touched). */
function checkOptions(o: QuickstartOptions): void {
  quickstartWeights(o.minedShare);
  if (o.minePackages !== null) pinnedPackages(o.minePackages);
}

export async function quickstart(o: QuickstartOptions & EvalExtras): Promise<QuickstartResult> {
  checkOptions(o);
  const seconds: StageSeconds = {};
  const total = Date.now();
  const { dir, data } = await quickstartData(o, seconds);
  // A resumed quickstart's total counts its data stages as recorded, not the time between its two processes.
  const recordedSeconds = o.resume ? Object.values(seconds).reduce((a, b) => a + b, 0) : 0;
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
  run.completer.close();
  done(transcriptFile, t, seconds, 'debug');

  seconds.total = recordedSeconds + (Date.now() - total) / 1000;
  const fit = {
    documents: data.documents.written / Math.max(data.documents.written + data.documents.tooLong, 1),
    tasks: run.tasks.scored / Math.max(run.tasks.scored + run.tasks.didNotFit, 1),
  };
  const summary: QuickstartResult = {
    dir, runDir: run.runDir, checkpoint: run.checkpoint, backend: run.backend, steps: run.steps, resumedAt: run.resumedAt, tokens: run.tokens,
    firstLoss: run.firstLoss, lastLoss: run.lastLoss, budget: run.budget, machine: run.machine, tokensPerS: run.tokensPerS, ndlEpochs: run.ndlEpochs,
    heldOut: { split: data.evalSplit, programs: data.testTraces.length }, nextState: run.result.tables, mined: run.mined, sessions: run.sessions, cruxeval: run.cruxeval, fit, seconds,
  };
  writeJson(path.join(dir, 'quickstart.json'), {
    ...summary,
    nextState: undefined,
    // How every unsampled answer below was decoded (next-state, sessions, the CruxEval protocol).
    decoding: run.completer.decoding,
    full_match_model: ratesOf(run.result.tables[run.completer.name], 'full'),
    full_match_baseline: ratesOf(run.result.tables.baseline, 'full'),
    src_baseline: ratesOf(run.result.tables.baseline, 'src'),
    full_match_naive: ratesOf(run.result.tables.naive, 'full'),
    mined: { programs: data.minedTraces.length, full_match_model: ratesOf(run.mined[run.completer.name], 'full'), full_match_baseline: ratesOf(run.mined.baseline, 'full') },
    // The whole tables (intervals, programs, exit shares) live in run/eval/next_state*.json.
    cruxeval: run.cruxeval && { file: run.cruxeval.file, programs: run.cruxeval.programs, protocol: run.cruxeval.protocol.byTask, trivial: run.cruxeval.trivial, full_match_model: ratesOf(run.cruxeval.nextState[run.completer.name], 'full'), full_match_baseline: ratesOf(run.cruxeval.nextState.baseline, 'full') },
    src_model: ratesOf(run.result.tables[run.completer.name], 'src'),
    ...(run.result.tables[FREE_SRC_NAME] && {
      [`full_match_${FREE_SRC_NAME}`]: ratesOf(run.result.tables[FREE_SRC_NAME], 'full'),
      [`src_${FREE_SRC_NAME}`]: ratesOf(run.result.tables[FREE_SRC_NAME], 'src'),
    }),
  });
  return summary;
}

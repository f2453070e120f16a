import * as fs from 'fs';
import * as path from 'path';
import { freshOutputDir, trainAndEvaluate, type TrainedAndEvaluated } from '../src/cli/quickstart';
import { cruxevalFile, EVAL_DEFAULTS, type EvalExtras } from '../src/cli/quickstart_eval';
import { EVAL_SPLITS, QUICKSTART_DEFAULTS, quickstartWeights, SHIPPED_CRUXEVAL, type QuickstartOptions, type StageSeconds } from '../src/cli/quickstart_options';
import { MAX_NDL_EPOCHS, NDL_TOKENS_PER_PROGRAM, ndlEpochs, ndlTrainTokens, programsFor } from '../src/cli/ndl_epochs';
import { prepareQuickstartData, type QuickstartData } from '../src/cli/quickstart_data';
import { loadRunConfigFile, trainingSeqLen } from '../src/train/run_config';
import { FREE_SRC_NAME } from '../src/eval/model_completer';
import type { ComponentRates } from '../src/eval/score';
import { writeReport, type ReportSection } from '../src/train/report';
import { escapeHtml, lineChart, type Series } from '../src/train/svg';
import { packageRoot } from '../src/util/paths';
import { choiceFlag, flagValue, intFlag } from './flags';
import { budgetsOf } from './learning_budgets';

/** Training tokens of one step of the recipe (micro-batch × accumulation × T). */
function tokensPerStep(o: QuickstartOptions): number {
  const config = loadRunConfigFile(o.config, o.set);
  return config.train.micro_batch_size * config.train.grad_accum * trainingSeqLen(config);
}

/**
 * The quickstart's data for the longest step budget: enough programs that it reads each NDL
 * document at most MAX_NDL_EPOCHS times (or exactly --programs when given).
 */
async function prepareData(o: QuickstartOptions, dir: string, seconds: StageSeconds, maxTokens: number | undefined, fixedPrograms: boolean): Promise<{ data: QuickstartData; programs: number }> {
  let programs = o.programs;
  const ndlShare = quickstartWeights(o.minedShare).ndl;
  if (maxTokens !== undefined && !fixedPrograms) programs = programsFor(maxTokens, NDL_TOKENS_PER_PROGRAM, o.programs, ndlShare);
  let data = await prepareQuickstartData({ ...o, programs }, dir, seconds);
  if (maxTokens === undefined || fixedPrograms) return { data, programs };
  const ndlTokens = ndlTrainTokens(data.dataDir);
  const epochs = ndlEpochs(ndlTokens, maxTokens, ndlShare);
  if (epochs > MAX_NDL_EPOCHS) {
    const perProgram = ndlTokens / programs;
    programs = programsFor(maxTokens, perProgram, programs + 1, ndlShare);
    process.stderr.write(`      the longest budget would read the NDL documents ${epochs.toFixed(2)} times; generating ${programs} programs instead\n`);
    data = await prepareQuickstartData({ ...o, programs, force: true }, freshOutputDir(dir, true), seconds);
  }
  return { data, programs };
}

/**
 * The learning curve of the quickstart recipe on this machine: one data set (quickstart stages
 * 1–5), then one training run per budget — each a complete run whose LR schedule ends at its own
 * budget, not a checkpoint of a longer run — each evaluated on the same held-out tasks beside
 * the rule baselines. Writes full-frame / SRC / EVT per action as a table and an
 * accuracy-vs-tokens plot into the longest run's report.html and bench/results/learning.json.
 *
 * Usage: npm run bench -- learning [--steps=2500,20000 | --minutes=10,120] [--programs=N]
 *          [--docs-per-program=N] [--out=DIR] [--backend=B] [--set=K=V ...]
 *          [--cruxeval=FILE|none [--cruxeval-programs=200]] [--sessions=30] [--mined-share=S]
 *          [--eval-split=test|validation]
 *
 * Budgets are work (--steps, the default: the same models on every machine); --minutes is an
 * opt-in wall-clock budget whose models depend on the machine's speed. 20,000 steps is the
 * "120-minute point" of the Muon recipe on a machine whose AdamW step trains 8k tokens/s. Data that runs out stops the curve (docs/eval.md, "Session
 * 8"): with step budgets the bench generates enough programs that the longest run reads each
 * NDL document at most twice (ndl_epochs.ts), checks that on the built data and generates more
 * once if the guess fell short; with --minutes the tokens are known only afterwards, so each
 * point records the epochs it read and says when they were more than two.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opt = (name: string) => flagValue(args, name);
  const budgets = budgetsOf(args);
  const o: QuickstartOptions & EvalExtras = {
    ...QUICKSTART_DEFAULTS,
    // Real code in every point: the shipped CruxEval copy, as in the quickstart (--cruxeval=none skips it).
    cruxeval: cruxevalFile(opt('cruxeval') ?? SHIPPED_CRUXEVAL),
    cruxevalPrograms: intFlag(args, 'cruxeval-programs', EVAL_DEFAULTS.cruxevalPrograms),
    sessions: intFlag(args, 'sessions', EVAL_DEFAULTS.sessions),
    // The learning curve keeps the free-SRC column beside the constrained one (docs/eval.md).
    freeSrc: true,
    out: opt('out') ?? path.join(packageRoot(), 'runs', 'bench-learning'),
    backend: opt('backend') ?? 'auto',
    programs: intFlag(args, 'programs', QUICKSTART_DEFAULTS.programs),
    docsPerProgram: intFlag(args, 'docs-per-program', QUICKSTART_DEFAULTS.docsPerProgram),
    // The mined real functions' share of the training rows, as `ndbg quickstart --mined-share` (validated there).
    minedShare: Number(opt('mined-share') ?? QUICKSTART_DEFAULTS.minedShare),
    // Validation when the curve chooses a recipe (a share for long runs), test when it reports one.
    evalSplit: choiceFlag(args, 'eval-split', EVAL_SPLITS, QUICKSTART_DEFAULTS.evalSplit),
    force: true,
    set: args.filter((a) => a.startsWith('--set=')).map((a) => a.slice(6)),
  };
  const dir = freshOutputDir(o.out, true);
  const seconds: StageSeconds = {};
  const stepTokens = tokensPerStep(o);
  const maxTokens = budgets.kind === 'steps' ? Math.max(...budgets.values) * stepTokens : undefined;
  const { data, programs } = await prepareData(o, dir, seconds, maxTokens, opt('programs') !== undefined);
  const ndlTokens = ndlTrainTokens(data.dataDir);
  const points: LearningPoint[] = [];
  for (const value of budgets.values) {
    const label = budgets.kind === 'steps' ? `${value} steps` : `${value} min`;
    const runDir = path.join(dir, budgets.kind === 'steps' ? `run-${value}steps` : `run-${value}min`);
    const r = budgets.kind === 'steps' ? await trainAndEvaluate({ ...o, steps: value }, data, runDir, null, seconds) : await trainAndEvaluate(o, data, runDir, value, seconds);
    if (r.ndlEpochs > MAX_NDL_EPOCHS) process.stderr.write(`      note: ${label} read the NDL documents ${r.ndlEpochs.toFixed(2)} times (more than ${MAX_NDL_EPOCHS}): give --programs ${programsFor(r.tokens, ndlTokens / programs, programs, quickstartWeights(o.minedShare).ndl)} for this budget\n`);
    points.push({ ...learningPoint(label, r), runDir });
    r.completer.close();
  }
  const longest = points[points.length - 1];
  const section: ReportSection = { title: 'Learning curve (quickstart recipe, one run per budget)', html: learningHtml(points) };
  writeReport(longest.runDir, undefined, { sections: [section] });
  const svgFile = path.join(packageRoot(), 'bench', 'results', 'learning.svg');
  fs.mkdirSync(path.dirname(svgFile), { recursive: true });
  fs.writeFileSync(svgFile, accuracyChart(points));
  return {
    recipe: { config: path.relative(packageRoot(), o.config), programsConfig: path.relative(packageRoot(), o.programsConfig), programs, docsPerProgram: o.docsPerProgram, evalPrograms: o.evalPrograms, evalSplit: o.evalSplit, minedShare: o.minedShare, set: o.set },
    budgets: budgets.kind,
    data: { ndlTrainTokens: ndlTokens, maxNdlEpochs: MAX_NDL_EPOCHS, tokensPerStep: stepTokens },
    fit: { documents: data.documents, seqLen: data.seqLen },
    points,
    plot: path.relative(packageRoot(), svgFile),
    report: path.join(longest.runDir, 'report.html'),
  };
}

interface LearningPoint {
  /** The budget: "4000 steps" or "120 min". */
  label: string;
  runDir: string;
  /** How many times the run read the NDL documents (ndl_epochs.ts). */
  ndlEpochs: number;
  backend: string;
  steps: number;
  tokens: number;
  lastLoss: number;
  tasks: { scored: number; didNotFit: number };
  /** How the model's unsampled answers were decoded (`4-beam search`, `greedy`). */
  decoding: string;
  /** action (and 'all') → model full/src/evt and baseline full, as fractions. */
  byAction: Record<string, { full: number; src: number; evt: number; freeSrcFull: number; freeSrcSrc: number; baselineFull: number; baselineSrc: number; naiveFull: number; fullCi: [number, number]; n: number; programs: number; exitShare: number; didNotFit: number }>;
  /** Stops right in scripted debug sessions on held-out programs (the model's own history). */
  sessions: { stops: number; right: number; sessions: number };
  /** The held-out mined real functions: next-state model / baseline full over all actions. */
  mined: { programs: number; modelFull: number; baselineFull: number; fullCi: [number, number] };
  /** Real code (with --cruxeval FILE): next-state model / baseline full over all actions and the CruxEval protocol's pass@1. */
  cruxeval?: { programs: number; modelFull: number; baselineFull: number; pass1: Record<string, number>; trivial: { output: number; input: number } };
  /** Copy probe top-1 on the repeat, and SRC tokens teacher-forced on the held-out documents (docs/eval.md). */
  copyProbeRepeatTop1: number;
  srcTokens: { firstToken: number; restTokens: number; spanExact: number; spans: number };
}

function learningPoint(label: string, r: TrainedAndEvaluated): Omit<LearningPoint, 'runDir'> {
  const model: Record<string, ComponentRates> = r.result.tables[r.completer.name];
  const base: Record<string, ComponentRates> = r.result.tables.baseline;
  const free: Record<string, ComponentRates> = r.result.tables[FREE_SRC_NAME];
  const byAction: LearningPoint['byAction'] = {};
  for (const [action, v] of Object.entries(model)) {
    byAction[action] = {
      full: v.full, src: v.src, evt: v.evt, freeSrcFull: free[action]?.full ?? 0, freeSrcSrc: free[action]?.src ?? 0,
      baselineFull: base[action]?.full ?? 0, baselineSrc: base[action]?.src ?? 0, naiveFull: r.result.tables.naive?.[action]?.full ?? 0,
      fullCi: v.ci.full, n: v.n, programs: v.programs, exitShare: v.exitShare, didNotFit: v.didNotFit,
    };
  }
  const crux = r.cruxeval;
  const cruxeval = crux && {
    programs: crux.programs, modelFull: crux.nextState[r.completer.name]?.all?.full ?? 0, baselineFull: crux.nextState.baseline?.all?.full ?? 0,
    pass1: Object.fromEntries(Object.entries(crux.protocol.byTask).map(([k, v]) => [k, v.greedyPass1])), trivial: crux.trivial,
  };
  const minedAll = r.mined[r.completer.name]?.all;
  const mined = { programs: minedAll?.programs ?? 0, modelFull: minedAll?.full ?? 0, baselineFull: r.mined.baseline?.all?.full ?? 0, fullCi: minedAll?.ci.full ?? [0, 0] as [number, number] };
  const { firstToken, restTokens, spanExact, spans } = r.srcTokens;
  return {
    label, ndlEpochs: r.ndlEpochs, backend: r.backend, steps: r.steps, tokens: r.tokens, lastLoss: r.lastLoss, tasks: r.tasks, decoding: r.completer.decoding ?? 'greedy', byAction,
    sessions: { stops: r.sessions.stops, right: r.sessions.right, sessions: r.sessions.sessions }, mined, cruxeval,
    copyProbeRepeatTop1: r.copyProbe.repeatAccuracy, srcTokens: { firstToken, restTokens, spanExact, spans },
  };
}

const pct = (x: number) => (100 * x).toFixed(1);

function learningHtml(points: LearningPoint[]): string {
  const actions = Object.keys(points[0].byAction);
  const head = `<tr><th>action</th>${points.map((p) => `<th>${p.label} (${(p.tokens / 1e6).toFixed(1)}M tok, ${p.ndlEpochs.toFixed(2)} NDL epochs): full [95% CI] / SRC / EVT | free SRC: full / SRC | baseline full / SRC | naive</th>`).join('')}</tr>`;
  const rows = actions.map((a) => `<tr><td>${escapeHtml(a)}</td>${points.map((p) => {
    const v = p.byAction[a];
    return v ? `<td>${pct(v.full)} [${pct(v.fullCi[0])}–${pct(v.fullCi[1])}] / ${pct(v.src)} / ${pct(v.evt)} | ${pct(v.freeSrcFull)} / ${pct(v.freeSrcSrc)} | ${pct(v.baselineFull)} / ${pct(v.baselineSrc)} | ${pct(v.naiveFull)}</td>` : '<td>-</td>';
  }).join('')}</tr>`);
  const copying = [
    `<tr><td>copy probe top-1</td>${points.map((p) => `<td>${pct(p.copyProbeRepeatTop1)}</td>`).join('')}</tr>`,
    `<tr><td>multi-step: stops right in scripted debug sessions</td>${points.map((p) => `<td>${p.sessions.right} / ${p.sessions.stops}</td>`).join('')}</tr>`,
    `<tr><td>held-out mined real functions, next-state all: model [95% CI] / baseline</td>${points.map((p) => `<td>${pct(p.mined.modelFull)} [${pct(p.mined.fullCi[0])}–${pct(p.mined.fullCi[1])}] / ${pct(p.mined.baselineFull)} (${p.mined.programs} functions)</td>`).join('')}</tr>`,
    `<tr><td>CruxEval next-state all, model / baseline; pass@1 (paper 1.8B: 48.0 / 57.7 / 53.6)</td>${points.map((p) => `<td>${cruxCell(p)}</td>`).join('')}</tr>`,
    `<tr><td>SRC tokens teacher-forced: first / rest / whole span</td>${points.map((p) => `<td>${pct(p.srcTokens.firstToken)} / ${pct(p.srcTokens.restTokens)} / ${pct(p.srcTokens.spanExact)}</td>`).join('')}</tr>`,
  ];
  return `${accuracyChart(points)}\n<table>${head}${rows.join('')}${copying.join('')}</table>`;
}

function cruxCell(p: LearningPoint): string {
  const c = p.cruxeval;
  if (!c) return 'skipped: no CruxEval file';
  return `${pct(c.modelFull)} / ${pct(c.baselineFull)}; ${Object.values(c.pass1).map(pct).join(' / ')} (trivial ${pct(c.trivial.output)})`;
}

function accuracyChart(points: LearningPoint[]): string {
  const series = (action: string, key: 'full' | 'src' | 'freeSrcFull' | 'baselineFull', label: string): Series => ({
    label,
    points: points.map((p) => [p.tokens / 1e6, 100 * (p.byAction[action]?.[key] ?? NaN)] as [number, number]),
  });
  return lineChart('Next-state exact match vs training tokens', [
    series('step_into', 'full', 'step_into full'),
    series('step_over', 'full', 'step_over full'),
    series('step_into', 'src', 'step_into SRC'),
    series('step_into', 'freeSrcFull', 'step_into full, free SRC'),
    series('all', 'full', 'all actions full'),
    series('all', 'baselineFull', 'baseline, all actions'),
  ], { xLabel: 'million tokens', yLabel: '%' });
}

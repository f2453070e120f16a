/** The quickstart's knobs and defaults, and the progress lines every stage prints. */
import { UserError } from '../util/errors';
import { assetPath } from '../util/paths';
import { formatDuration } from '../util/progress';

export interface QuickstartOptions {
  out: string;
  /**
   * Opt-in wall-clock training budget; null (the default) trains a fixed number of steps. A time
   * budget is machine-dependent: a machine half as fast trains half the steps, a weaker model.
   */
  minutes: number | null;
  /** Training steps: the budget (the LR schedule decays over exactly these), or with `minutes`
   * an upper bound. null: DEFAULT_STEPS, or MINUTES_MAX_STEPS with `minutes`. */
  steps: number | null;
  programs: number;
  docsPerProgram: number;
  /** Distinct held-out programs the next-state eval draws (one record each). */
  evalPrograms: number;
  /** The split the eval draws from: recipe choices on validation, the reported figures on test. */
  evalSplit: EvalSplit;
  config: string;
  /**
   * Generator config: configs/programs-quickstart.json keeps programs (≤ 360 characters, about
   * 100 tokens of context) short enough that a document shows the program and its whole run,
   * up to the trajectory's end, within the quickstart model's 512-token context (docs/eval.md,
   * "Choosing the quickstart").
   */
  programsConfig: string;
  tokenizer: string;
  backend: string;
  seed: number;
  workers: number;
  /** Bytes of the standard library's source text in the code source. */
  codeBytes: number;
  /**
   * The pinned package list mined beside the standard library (configs/mine-packages-quickstart.txt);
   * null: the standard library alone (no pip; a different, smaller mine).
   */
  minePackages: string | null;
  /** The mined real functions' share of the training rows (quickstartWeights). */
  minedShare: number;
  /** Piece dropout on the training documents (src/tokenizer/piece_dropout.ts); 0 keeps the canonical pieces. */
  pieceDropout: number;
  force: boolean;
  /**
   * Continue a quickstart stopped in training: reuse OUT's stages 1–5 (quickstart_record.ts) and
   * resume the run from its latest checkpoint, then evaluate as usual.
   */
  resume: boolean;
  /** Extra `--set` overrides for the training config. */
  set: string[];
}

/** The CruxEval copy that ships with ndbg (evalsets/README.md): evaluation only, never trained on. */
export const SHIPPED_CRUXEVAL = assetPath('evalsets/cruxeval.jsonl');

export const EVAL_SPLITS = ['validation', 'test'] as const;
export type EvalSplit = (typeof EVAL_SPLITS)[number];

/**
 * The default work budget: 2,500 steps of micro-batch 4 × 512 tokens (5.1M tokens) with Muon
 * (configs/quickstart.json), about 15 minutes on a 2-core machine whose AdamW step trains 8k
 * tokens/s (a Muon step costs 1.3–1.45× an AdamW one). Chosen on the validation split against
 * 3,000, 3,500 and 4,000 steps, which were within 3 points of it over all actions and would
 * leave the whole quickstart at or over 30 minutes on such a machine (docs/eval.md, "Session
 * 24"). A step budget, not a time budget, so every machine trains the same model and only the
 * time differs.
 */
export const DEFAULT_STEPS = 2500;

/**
 * The training mixture: 90% of rows from the generated programs' NDL documents and 10% from the
 * code source (the standard library's text), less the mined real functions' share: taken from
 * the code source first, then from the generated programs (docs/eval.md, "Session 35": taken
 * from the generated programs' share it cost them more). One function because the learning bench
 * sizes its data by the NDL share of the tokens a run reads.
 */
export function quickstartWeights(minedShare: number): { ndl: number; code: number; mined: number } {
  if (!(minedShare >= 0 && minedShare < 1)) throw new UserError(`--mined-share ${minedShare}: expected a share in [0, 1)`);
  const fromCode = Math.min(minedShare, 0.1);
  return { ndl: 0.9 - (minedShare - fromCode), code: 0.1 - fromCode, mined: minedShare };
}

/**
 * The default mined share: 0, chosen on the validation split. At 0.1 the held-out mined functions
 * gained and CruxEval did not move, but breakpoint on the generated programs lost 0.3–4.3 points
 * over three runs, where issue 33's bar leaves 0.3 (docs/eval.md, "Session 35"). At 10,000 steps
 * the same share cost the generated programs nothing (docs/eval.md, "Session 37"), and in a model
 * with 4× the parameters it cost them 0.7 (docs/eval.md, "Session 38"). Checked on the test split
 * over three seeds at 0.05: real functions +3.9, the generated programs level, but breakpoint 54.1
 * against issue 33's bar of 55.1 (docs/eval.md, "Session 40").
 */
export const DEFAULT_MINED_SHARE = 0;

/** With a time budget and no step count, the most steps (the time budget ends training first). */
export const MINUTES_MAX_STEPS = 100000;

/** How long training runs: a fixed number of steps, or a wall-clock budget (opt-in). */
export type TrainBudget = { kind: 'steps'; steps: number } | { kind: 'minutes'; minutes: number; maxSteps: number };

export function trainBudget(minutes: number | null, steps: number | null): TrainBudget {
  if (minutes !== null && !(minutes > 0)) throw new UserError(`--minutes ${minutes}: expected a positive number of minutes`);
  if (steps !== null && !(Number.isInteger(steps) && steps > 0)) throw new UserError(`--steps ${steps}: expected a positive whole number of steps`);
  return minutes === null ? { kind: 'steps', steps: steps ?? DEFAULT_STEPS } : { kind: 'minutes', minutes, maxSteps: steps ?? MINUTES_MAX_STEPS };
}

/** The run config overrides that set the budget: train.steps is the LR schedule's horizon. */
export function budgetOverrides(b: TrainBudget): string[] {
  return b.kind === 'steps' ? [`train.steps=${b.steps}`, 'train.max_minutes=null'] : [`train.steps=${b.maxSteps}`, `train.max_minutes=${b.minutes}`];
}

export function describeBudget(b: TrainBudget): string {
  return b.kind === 'steps' ? `${b.steps} steps` : `up to ${b.minutes} min (a time budget: the steps depend on this machine's speed)`;
}

export const QUICKSTART_DEFAULTS: Omit<QuickstartOptions, 'out'> = {
  minutes: null,
  steps: null,
  // 7,000: the 2,500-step budget reads about 5M tokens, under half an epoch of the ~6,300
  // training programs' documents (fresh programs beat repeated ones: docs/eval.md, Sessions 10
  // and 11), and each held-out split keeps ≥ 300 distinct programs (about 5% each); 12,000 spent
  // 2.5 more minutes generating documents the run never read (Session 14).
  programs: 7000,
  // 2, not 8: the loader reads a source's documents in program order (shuffled only within
  // windows), so a run reading a quarter of an epoch of 8 per program saw a quarter of the
  // programs; 2 per program spreads the same reads over all of them (+2.7 on validation,
  // +4.6 on the test seeds: docs/eval.md, Session 25).
  docsPerProgram: 2,
  // ≥ 300 distinct programs (≥ 300 tasks per action): a 95% interval of about ±6 points on an
  // action's figure, against ±10 at 100 (issue 33); each split of 7,000 programs holds about 340.
  evalPrograms: 300,
  evalSplit: 'test',
  config: assetPath('configs/quickstart.json'),
  programsConfig: assetPath('configs/programs-quickstart.json'),
  tokenizer: assetPath('tokenizer/ndbg-2k.model'),
  backend: 'auto',
  seed: 0,
  workers: 2,
  codeBytes: 2 << 20,
  minePackages: assetPath('configs/mine-packages-quickstart.txt'),
  minedShare: DEFAULT_MINED_SHARE,
  pieceDropout: 0,
  force: false,
  resume: false,
  set: [],
};

/** Wall-clock seconds per stage, by stage name (written to quickstart.json). */
export type StageSeconds = Record<string, number>;

export function stage(n: number, name: string, what: string): void {
  process.stderr.write(`\n[${n}/9] ${name}: ${what}\n`);
}

export function done(where: string, start: number, seconds: StageSeconds, key: string): void {
  seconds[key] = (Date.now() - start) / 1000;
  process.stderr.write(`      -> ${where} (${formatDuration(seconds[key])})\n`);
}

export const pct = (part: number, whole: number): string => `${((100 * part) / Math.max(whole, 1)).toFixed(1)}%`;

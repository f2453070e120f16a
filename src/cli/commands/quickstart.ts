import type { Argv, CommandModule } from 'yargs';
import { BACKENDS } from '../../backend/backend';
import { FREE_SRC_NAME } from '../../eval/model_completer';
import { formatCruxEvalProtocol } from '../../eval/cruxeval_suite';
import { ALL_BUT_CONTINUE } from '../../eval/score';
import { formatSessionAccuracy } from '../../eval/session_accuracy';
import { quickstart, QUICKSTART_DEFAULTS, type QuickstartResult } from '../quickstart';
import { cruxevalFile, EVAL_DEFAULTS } from '../quickstart_eval';
import { DEFAULT_STEPS, EVAL_SPLITS, SHIPPED_CRUXEVAL, type EvalSplit } from '../quickstart_options';
import { formatMachine } from '../../util/machine';
import { formatDuration } from '../../util/progress';
import { averagedNote } from '../../train/average';

/** `ndbg quickstart`: the whole pipeline on embedded defaults (src/cli/quickstart.ts). */
export const quickstartCommand: CommandModule = {
  command: 'quickstart',
  describe: 'Generate programs, trace, sample NDL, build data, train the tiny model, evaluate, report and debug — end to end',
  builder: (y: Argv) =>
    y
      .option('out', { type: 'string', default: 'runs/quickstart', describe: 'Directory for every artifact' })
      .option('steps', { type: 'number', describe: `Training steps (default ${DEFAULT_STEPS}): the budget, the same model on every machine; with --minutes, the most steps` })
      .option('minutes', { type: 'number', describe: 'Train for a wall-clock budget instead of a step count (machine-dependent: a slower machine trains fewer steps, a weaker model)' })
      .option('programs', { type: 'number', default: QUICKSTART_DEFAULTS.programs, describe: 'Synthetic programs to generate' })
      .option('docs-per-program', { type: 'number', default: QUICKSTART_DEFAULTS.docsPerProgram, describe: 'NDL documents sampled per training program' })
      .option('eval-programs', { type: 'number', default: QUICKSTART_DEFAULTS.evalPrograms, describe: 'Distinct held-out programs for the next-state evaluation (one record each)' })
      .option('eval-split', { type: 'string', choices: EVAL_SPLITS as unknown as string[], default: QUICKSTART_DEFAULTS.evalSplit, describe: 'Held-out split to evaluate on: validation for choosing a recipe, test for reporting it' })
      .option('config', { type: 'string', default: QUICKSTART_DEFAULTS.config, describe: 'Training config' })
      .option('programs-config', { type: 'string', default: QUICKSTART_DEFAULTS.programsConfig, describe: 'Program generator config' })
      .option('tokenizer', { type: 'string', default: QUICKSTART_DEFAULTS.tokenizer, describe: 'Tokenizer model' })
      .option('backend', { type: 'string', choices: BACKENDS as unknown as string[], default: QUICKSTART_DEFAULTS.backend, describe: 'tfjs backend' })
      .option('seed', { type: 'number', default: QUICKSTART_DEFAULTS.seed, describe: 'Seed of every stage' })
      .option('workers', { type: 'number', default: QUICKSTART_DEFAULTS.workers, describe: 'Sandbox, tokenizer and decode workers (processes side by side)' })
      .option('set', { type: 'string', array: true, default: [] as string[], describe: 'Override a training config field, e.g. --set train.micro_batch_size=4' })
      .option('cruxeval', { type: 'string', default: SHIPPED_CRUXEVAL, describe: 'CruxEval JSONL: real code (next-state and the paper\'s CruxEval protocol) on a fixed sample; the shipped copy by default, none to skip' })
      .option('cruxeval-programs', { type: 'number', default: EVAL_DEFAULTS.cruxevalPrograms, describe: 'The CruxEval sample: its first N programs' })
      .option('free-src', { type: 'boolean', default: false, describe: 'Also score the model decoding SRC freely (doubles the eval time)' })
      .option('sessions', { type: 'number', default: EVAL_DEFAULTS.sessions, describe: 'Held-out programs with a scripted, verified debug session each way (multi-step accuracy)' })
      .option('mine-packages', { type: 'string', default: QUICKSTART_DEFAULTS.minePackages ?? undefined, describe: 'Pinned package list (name==version lines) installed with pip and mined beside the standard library for the real-function source; none: the standard library alone (no pip, a smaller mine)' })
      .option('mined-share', { type: 'number', default: QUICKSTART_DEFAULTS.minedShare, describe: "The mined real functions' share of the training rows, taken from the code source's 0.1 first (0: evaluated on, not trained on; measured: docs/eval.md, Session 35)" })
      .option('piece-dropout', { type: 'number', default: QUICKSTART_DEFAULTS.pieceDropout, describe: 'Split each word piece of the training documents into smaller ones with this probability (subword regularization; measured, off by default: docs/data.md)' })
      .option('force', { type: 'boolean', default: false, describe: 'Replace a non-empty --out' })
      .option('resume', { type: 'boolean', default: false, describe: 'Continue a quickstart stopped in training (Ctrl-C, SIGTERM): reuse --out\'s data and resume from its latest checkpoint' }),
  handler: async (argv) => {
    const a = argv as Record<string, unknown>;
    const r = await quickstart({
      ...QUICKSTART_DEFAULTS,
      out: a.out as string,
      minutes: (a.minutes as number | undefined) ?? null,
      steps: (a.steps as number | undefined) ?? null,
      programs: a.programs as number,
      docsPerProgram: a['docs-per-program'] as number,
      evalPrograms: a['eval-programs'] as number,
      evalSplit: a['eval-split'] as EvalSplit,
      config: a.config as string,
      programsConfig: a['programs-config'] as string,
      tokenizer: a.tokenizer as string,
      backend: a.backend as string,
      seed: a.seed as number,
      workers: a.workers as number,
      force: a.force as boolean,
      resume: a.resume as boolean,
      pieceDropout: a['piece-dropout'] as number,
      minedShare: a['mined-share'] as number,
      minePackages: a['mine-packages'] === 'none' ? null : (a['mine-packages'] as string),
      set: a.set as string[],
      cruxeval: cruxevalFile(a.cruxeval as string | undefined),
      cruxevalPrograms: a['cruxeval-programs'] as number,
      sessions: a.sessions as number,
      freeSrc: a['free-src'] as boolean,
    });
    const m = r.nextState.model;
    const free = r.nextState[FREE_SRC_NAME];
    const b = r.nextState.baseline;
    const naive = r.nextState.naive;
    const rate = (t: typeof m, k: string) => (100 * (t?.[k]?.full ?? 0)).toFixed(1).padStart(5);
    const ci = (t: typeof m, k: string) => (t?.[k] ? `[${(100 * t[k].ci.full[0]).toFixed(0)}-${(100 * t[k].ci.full[1]).toFixed(0)}]` : '').padEnd(8);
    const line = (k: string) => `  ${k.padEnd(16)} model ${rate(m, k)}% ${ci(m, k)}${free ? ` (free SRC ${rate(free, k)}%)` : ''}   baseline ${rate(b, k)}%   naive ${rate(naive, k)}%   (${m?.[k]?.n ?? 0} tasks, ${m?.[k]?.programs ?? 0} programs)`;
    process.stdout.write(
      [
        '',
        `quickstart finished in ${formatDuration(r.seconds.total)}: everything is in ${r.dir}`,
        `  training: ${r.steps} steps (${budgetKind(r)}${r.resumedAt !== null ? `, resumed at step ${r.resumedAt}` : ''}), ${Math.round(r.tokensPerS)} tokens/s on ${formatMachine(r.machine)}`,
        `  training loss ${r.firstLoss.toFixed(3)} -> ${r.lastLoss.toFixed(3)}; checkpoint ${r.checkpoint}${averagedNote(r.checkpoint)}`,
        `  next-state full-frame exact match on ${r.heldOut.programs} distinct held-out programs (${r.heldOut.split} split):`,
        line('step_into'),
        line('step_over'),
        line('all'),
        line(ALL_BUT_CONTINUE),
        `  mined real functions, next-state (${r.mined.model?.all?.programs ?? 0} held-out functions): model ${rate(r.mined.model, 'all')}% ${ci(r.mined.model, 'all')}  baseline ${rate(r.mined.baseline, 'all')}%`,
        `  ${formatSessionAccuracy(r.sessions)}`,
        `  ${r.cruxeval ? `CruxEval next-state (${r.cruxeval.programs} programs): model ${rate(r.cruxeval.nextState.model, 'all')}%, baseline ${rate(r.cruxeval.nextState.baseline, 'all')}%; ${formatCruxEvalProtocol(r.cruxeval)}` : 'CruxEval: skipped (--cruxeval none)'}`,
        `  report: ${r.runDir}/report.html`,
        `  try it: npx ndbg debug --checkpoint ${r.checkpoint} examples/count.py --call 'count("berry", "r")' --verify`,
        '',
      ].join('\n'),
    );
  },
};

/** The budget as the summary names it: a step budget, or a time budget (machine-dependent). */
function budgetKind(r: QuickstartResult): string {
  return r.budget.kind === 'steps' ? 'step budget' : `time budget of ${r.budget.minutes} min, machine-dependent`;
}

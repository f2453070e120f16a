import type { Argv, CommandModule } from 'yargs';
import { BACKENDS } from '../../model/backend';
import { FREE_SRC_NAME } from '../../eval/model_completer';
import { quickstart, QUICKSTART_DEFAULTS } from '../quickstart';
import { formatDuration } from '../../util/progress';

/** `ndbg quickstart`: the whole pipeline on embedded defaults (src/cli/quickstart.ts). */
export const quickstartCommand: CommandModule = {
  command: 'quickstart',
  describe: 'Generate programs, trace, sample NDL, build data, train the tiny model, evaluate, report and debug — end to end',
  builder: (y: Argv) =>
    y
      .option('out', { type: 'string', default: 'runs/quickstart', describe: 'Directory for every artifact' })
      .option('minutes', { type: 'number', default: QUICKSTART_DEFAULTS.minutes, describe: 'Training time budget in minutes' })
      .option('steps', { type: 'number', default: QUICKSTART_DEFAULTS.steps, describe: 'Most training steps (the time budget usually ends training first)' })
      .option('programs', { type: 'number', default: QUICKSTART_DEFAULTS.programs, describe: 'Synthetic programs to generate' })
      .option('docs-per-program', { type: 'number', default: QUICKSTART_DEFAULTS.docsPerProgram, describe: 'NDL documents sampled per training program' })
      .option('eval-programs', { type: 'number', default: QUICKSTART_DEFAULTS.evalPrograms, describe: 'Held-out programs for the next-state evaluation' })
      .option('config', { type: 'string', default: QUICKSTART_DEFAULTS.config, describe: 'Training config' })
      .option('programs-config', { type: 'string', default: QUICKSTART_DEFAULTS.programsConfig, describe: 'Program generator config' })
      .option('tokenizer', { type: 'string', default: QUICKSTART_DEFAULTS.tokenizer, describe: 'Tokenizer model' })
      .option('backend', { type: 'string', choices: BACKENDS as unknown as string[], default: QUICKSTART_DEFAULTS.backend, describe: 'tfjs backend' })
      .option('seed', { type: 'number', default: QUICKSTART_DEFAULTS.seed, describe: 'Seed of every stage' })
      .option('workers', { type: 'number', default: QUICKSTART_DEFAULTS.workers, describe: 'Sandbox and tokenizer workers' })
      .option('set', { type: 'string', array: true, default: [] as string[], describe: 'Override a training config field, e.g. --set train.micro_batch_size=4' })
      .option('force', { type: 'boolean', default: false, describe: 'Replace a non-empty --out' }),
  handler: async (argv) => {
    const a = argv as Record<string, unknown>;
    const r = await quickstart({
      ...QUICKSTART_DEFAULTS,
      out: a.out as string,
      minutes: a.minutes as number,
      steps: a.steps as number,
      programs: a.programs as number,
      docsPerProgram: a['docs-per-program'] as number,
      evalPrograms: a['eval-programs'] as number,
      config: a.config as string,
      programsConfig: a['programs-config'] as string,
      tokenizer: a.tokenizer as string,
      backend: a.backend as string,
      seed: a.seed as number,
      workers: a.workers as number,
      force: a.force as boolean,
      set: a.set as string[],
    });
    const m = r.nextState.model;
    const free = r.nextState[FREE_SRC_NAME];
    const b = r.nextState.baseline;
    const rate = (t: typeof m, k: string) => (100 * (t?.[k]?.full ?? 0)).toFixed(1).padStart(5);
    const line = (k: string) => `  ${k.padEnd(12)} model ${rate(m, k)}%   (free SRC ${rate(free, k)}%)   baseline ${rate(b, k)}%`;
    process.stdout.write(
      [
        '',
        `quickstart finished in ${formatDuration(r.seconds.total)}: everything is in ${r.dir}`,
        `  training loss ${r.firstLoss.toFixed(3)} -> ${r.lastLoss.toFixed(3)}; checkpoint ${r.checkpoint}`,
        '  next-state full-frame exact match on held-out programs:',
        line('step_into'),
        line('step_over'),
        line('all'),
        `  report: ${r.runDir}/report.html`,
        `  try it: npx ndbg debug --checkpoint ${r.checkpoint} examples/count.py --call 'count("berry", "r")' --verify`,
        '',
      ].join('\n'),
    );
  },
};

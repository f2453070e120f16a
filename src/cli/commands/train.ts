import * as path from 'path';
import type { CommandModule } from 'yargs';
import { withConfigOptions } from '../options';
import { BACKENDS } from '../../backend/backend';
import { trainFromConfig } from '../../train/run';
import { averagedNote } from '../../train/average';

interface TrainArgs {
  config?: string;
  set: string[];
  out?: string;
  resume: boolean;
  steps?: number;
  backend?: string;
  quiet: boolean;
}

/** Where `ndbg train` writes without --out: checkpoints/NAME for --config …/NAME.json (checkpoints/README.md). */
export function defaultRunDir(configFile: string): string {
  return path.join('checkpoints', path.basename(configFile, path.extname(configFile)));
}

/** `ndbg train`: pretrain a model from a run config (docs/train.md). */
export const trainCommand: CommandModule<object, TrainArgs> = {
  command: 'train',
  describe: 'Train a model: AdamW, LR schedule, validation, atomic checkpoints; --resume continues exactly',
  builder: (y) =>
    withConfigOptions(y)
      .option('out', { type: 'string', describe: 'run directory (checkpoints/, metrics.jsonl, config.json); default checkpoints/NAME for --config …/NAME.json' })
      .option('resume', { type: 'boolean', default: false, describe: 'continue from the latest complete checkpoint in --out' })
      .option('steps', { type: 'number', describe: 'shorthand for --set train.steps=N' })
      .option('backend', { type: 'string', choices: BACKENDS as unknown as string[], describe: 'shorthand for --set train.backend=B' })
      .option('quiet', { type: 'boolean', default: false, describe: 'no progress bar' })
      .example('$0 train --config configs/tiny.json', 'train the tiny model into checkpoints/tiny')
      .example('$0 train --config configs/tiny.json --resume', 'continue after a crash or pre-emption')
      .example('$0 train --config configs/tiny.json --out runs/tiny', 'any other run directory'),
  handler: async (args) => {
    const overrides = [...(args.set ?? [])];
    if (args.steps !== undefined) overrides.push(`train.steps=${args.steps}`);
    if (args.backend !== undefined) overrides.push(`train.backend=${args.backend}`);
    // Without --config, trainFromConfig names the missing flag before the run directory matters.
    const out = args.out ?? defaultRunDir(args.config ?? '');
    const s = await trainFromConfig({ config: args.config, overrides, runDir: out, resume: args.resume, quiet: args.quiet });
    const val = s.lastValLoss !== undefined ? ` val_loss=${s.lastValLoss.toFixed(4)}` : '';
    process.stdout.write(
      `trained steps ${s.startStep}..${s.endStep} loss=${s.finalLoss.toFixed(4)}${val} tokens=${s.tokens} ` +
        `in ${s.loopSeconds.toFixed(1)}s on ${s.backend} → ${out}\n` +
        (s.averaged ? `averaged checkpoint ${s.averaged.dir}${averagedNote(s.averaged.dir)}\n` : ''),
    );
    if (s.stoppedBySignal) process.exitCode = 130;
  },
};

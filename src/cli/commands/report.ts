import * as fs from 'fs';
import type { CommandModule } from 'yargs';
import { UserError } from '../../util/errors';
import { writeReport } from '../../train/report';

interface ReportArgs {
  run_dir: string;
  out?: string;
}

/** `ndbg report RUN_DIR`: a self-contained HTML page of a training run (see docs/train.md). */
export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report <run_dir>',
  describe: 'Write RUN_DIR/report.html: loss, learning-rate and throughput charts, the config, evaluation results',
  builder: (y) =>
    y
      .positional('run_dir', { type: 'string', demandOption: true, describe: 'run directory written by `ndbg train`' })
      .option('out', { type: 'string', describe: 'output file (default RUN_DIR/report.html)' }),
  handler: (args) => {
    if (!fs.existsSync(args.run_dir) || !fs.statSync(args.run_dir).isDirectory()) {
      throw new UserError(`report: ${args.run_dir} is not a directory`);
    }
    const file = writeReport(args.run_dir, args.out);
    process.stdout.write(`${file}\n`);
  },
};

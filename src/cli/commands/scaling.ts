import * as fs from 'fs';
import * as path from 'path';
import type { CommandModule } from 'yargs';
import { fitSweep } from '../../scaling/fit';
import { renderScalingReport } from '../../scaling/report';
import { collectResults } from '../../scaling/sweep_dir';
import { UserError } from '../../util/errors';
import { replaceFileAtomic } from '../../util/fsync';
import { formatNumber } from '../../train/svg';

interface FitArgs {
  sweep: string;
  loss: 'val' | 'train';
  params: 'non_embedding' | 'total';
  bootstrap: number;
  seed: number;
  holdout?: string;
  out?: string;
}

const fit: CommandModule<object, FitArgs> = {
  command: 'fit <sweep>',
  describe: 'Fit L(N,D) = E + A/N^α + B/D^β (Chinchilla approach 3, bootstrap intervals; approach 2 on iso-FLOP slices): scaling.json + scaling.html',
  builder: (y) =>
    y
      .positional('sweep', { type: 'string', demandOption: true, describe: 'sweep directory (ndbg sweep --out)' })
      .option('loss', { choices: ['val', 'train'] as const, default: 'val' as const, describe: 'final validation loss, or the mean train loss of the last tenth of the steps' })
      .option('params', { choices: ['non_embedding', 'total'] as const, default: 'non_embedding' as const, describe: 'what N counts' })
      .option('bootstrap', { type: 'number', default: 200, describe: 'bootstrap resamples for the intervals' })
      .option('seed', { type: 'number', default: 0, describe: 'seed of the bootstrap resampling' })
      .option('holdout', { type: 'string', describe: 'cell id left out of the fit and predicted' })
      .option('out', { type: 'string', describe: 'directory for scaling.json and scaling.html (default: the sweep directory)' })
      .example('$0 scaling fit sweeps/cpu-mini --holdout m6-C3e13-s0', 'fit without the largest cell and predict it'),
  handler: (args) => {
    if (!fs.existsSync(args.sweep)) throw new UserError(`sweep directory ${args.sweep} does not exist`);
    if (!Number.isInteger(args.bootstrap) || args.bootstrap < 1) throw new UserError(`--bootstrap ${args.bootstrap}: must be a positive integer`);
    const result = fitSweep(collectResults(args.sweep), args.sweep, { loss: args.loss, params: args.params, bootstrap: args.bootstrap, seed: args.seed, holdout: args.holdout });
    const out = args.out ?? args.sweep;
    fs.mkdirSync(out, { recursive: true });
    replaceFileAtomic(path.join(out, 'scaling.json'), JSON.stringify(result, null, 1) + '\n');
    replaceFileAtomic(path.join(out, 'scaling.html'), renderScalingReport(result));
    const { law, ci } = result.approach3;
    const iv = (k: keyof typeof law) => `${formatNumber(law[k])} [${formatNumber(ci[k].lo)}, ${formatNumber(ci[k].hi)}]`;
    const lines = [
      `L(N, D) = E + A/N^α + B/D^β on ${result.points.length} cells (${result.loss} loss, N = ${result.params} parameters):`,
      `  α ${iv('alpha')}   β ${iv('beta')}   E ${iv('E')}   A ${iv('A')}   B ${iv('B')}   (Chinchilla α 0.34 β 0.28; replication 0.35 / 0.37)`,
    ];
    if (result.approach2) {
      const withMin = result.approach2.slices.filter((s) => s.minimum).length;
      lines.push(`  approach 2: ${withMin}/${result.approach2.slices.length} iso-FLOP slices with an interior minimum${result.approach2.nOpt ? `; N_opt ∝ C^${result.approach2.nOpt.a.toFixed(3)}` : ''}`);
    }
    const h = result.holdout;
    if (h) lines.push(`  held out ${h.id}: predicted ${h.predicted.toFixed(4)} [${h.ci.lo.toFixed(4)}, ${h.ci.hi.toFixed(4)}]${h.measured === null ? ' (not trained)' : `, measured ${h.measured.toFixed(4)} (${h.error_pct!.toFixed(2)}%)`}`);
    const ns = result.next_state;
    if (ns) lines.push(`  next-state eval on ${ns.length} cells: full match ${Math.min(...ns.map((e) => 100 * e.next_state.overall.model)).toFixed(1)}–${Math.max(...ns.map((e) => 100 * e.next_state.overall.model)).toFixed(1)}% (accuracy vs compute in the report)`);
    lines.push(`→ ${path.join(out, 'scaling.json')}, ${path.join(out, 'scaling.html')}`);
    process.stdout.write(lines.join('\n') + '\n');
  },
};

/** `ndbg scaling ...`: scaling laws from a sweep (docs/scaling.md). */
export const scalingCommand: CommandModule = {
  command: 'scaling <command>',
  describe: 'Scaling laws from an `ndbg sweep` directory',
  builder: (y) => y.command(fit).demandCommand(1, 'Pick a subcommand: fit'),
  handler: () => undefined,
};

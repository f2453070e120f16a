import * as fs from 'fs';
import * as path from 'path';
import type { CommandModule } from 'yargs';
import { collectResults, RESULTS } from '../../scaling/sweep_dir';
import { loadGrid } from '../../scaling/grid';
import { runSweep } from '../../scaling/sweep';
import { UserError } from '../../util/errors';
import { replaceFileAtomic } from '../../util/fsync';
import { formatShard, parseShardSpec } from '../../util/shard';

interface SweepArgs {
  grid: string;
  out?: string;
  shard: string;
  collect: boolean;
  'eval-only': boolean;
  quiet: boolean;
  set?: string[];
}

/** `ndbg sweep GRID.json`: a grid of training runs, resumable and shardable (docs/scaling.md). */
export const sweepCommand: CommandModule<object, SweepArgs> = {
  command: 'sweep <grid>',
  describe: 'Train a grid of sizes × budgets × seeds as run directories under one sweep directory; rerun to resume; --collect gathers',
  builder: (y) =>
    y
      .positional('grid', { type: 'string', demandOption: true, describe: 'grid file (configs/sweeps/*.json)' })
      .option('out', { type: 'string', describe: 'sweep directory (default sweeps/NAME, NAME from the grid)' })
      .option('shard', { type: 'string', default: '0/1', describe: 'I/N, or auto (Slurm array / Kubernetes Indexed Job, as `ndbg shard`): train only this shard\'s cells' })
      .option('collect', { type: 'boolean', default: false, describe: 'train nothing: gather every cell\'s status and results into SWEEP/results.json' })
      .option('eval-only', { type: 'boolean', default: false, describe: 'train nothing: run the grid\'s next_state_eval on this shard\'s finished cells that lack it (rerun to resume)' })
      .option('set', { type: 'string', array: true, describe: 'FIELD=VALUE override of every cell\'s run config, after the grid\'s own "set" (e.g. data.datasets=[...])' })
      .option('quiet', { type: 'boolean', default: false, describe: 'no progress bars' })
      .example('$0 sweep configs/sweeps/cpu-mini.json', 'train the CPU mini-ladder into sweeps/cpu-mini (rerun after a kill to resume)')
      .example('$0 sweep configs/sweeps/cpu-mini.json --shard auto', 'in a Slurm array / Indexed Job task')
      .example('$0 sweep configs/sweeps/cpu-mini.json --eval-only', 'after adding "next_state_eval" to the grid: evaluate the trained cells, no retraining')
      .example('$0 sweep configs/sweeps/cpu-mini.json --collect', 'after all shards: results.json, then `ndbg scaling fit sweeps/cpu-mini`'),
  handler: async (args) => {
    if (args.collect && args['eval-only']) throw new UserError('give --collect or --eval-only, not both');
    const shard = parseShardSpec(args.shard);
    const { grid } = args.collect && args.out ? { grid: undefined } : loadGrid(args.grid, args.set);
    const out = args.out ?? path.join('sweeps', grid!.name);
    if (args.collect) {
      const r = collectResults(out);
      replaceFileAtomic(path.join(out, RESULTS), JSON.stringify(r, null, 1) + '\n');
      for (const c of r.cells) {
        const res = c.result;
        const ns = c.next_state && ` next-state ${(100 * c.next_state.overall.model).toFixed(1)}% (baseline ${(100 * c.next_state.overall.baseline).toFixed(1)}%, ${c.next_state.tasks} tasks)`;
        process.stdout.write(`${c.id.padEnd(24)} ${c.status.padEnd(8)}${res ? ` train ${res.train_loss.toFixed(4)} val ${res.val_loss?.toFixed(4) ?? '—'} tokens ${res.tokens} FLOPs ${res.flops.toExponential(2)} ${res.wall_s.toFixed(0)}s${ns ?? ''}` : c.error ? ` ${c.error.split('\n')[0]}` : ''}\n`);
      }
      process.stdout.write(`${r.counts.done}/${r.cells.length} done, ${r.counts.running} running or interrupted, ${r.counts.failed} failed, ${r.counts.pending} pending → ${path.join(out, RESULTS)}\n`);
      return;
    }
    if (fs.existsSync(out) && !fs.statSync(out).isDirectory()) throw new UserError(`--out ${out} is a file`);
    const o = await runSweep({ grid: args.grid, out, shard, set: args.set, quiet: args.quiet, evalOnly: args['eval-only'] });
    const evals = o.evaluated.length + o.evalSkipped.length > 0 ? `; next-state eval: ${o.evaluated.length} evaluated, ${o.evalSkipped.length} already evaluated` : '';
    process.stdout.write(
      args['eval-only']
        ? `sweep shard ${formatShard(shard)} (eval only): ${o.evaluated.length} evaluated, ${o.evalSkipped.length} already evaluated, ${o.notTrained.length} not trained yet of ${o.mine} cells → ${out}\n`
        : `sweep shard ${formatShard(shard)}: ${o.trained.length} trained, ${o.skipped.length} already done, ${o.failed.length} failed of ${o.mine} cells${evals} → ${out}\n`,
    );
    for (const f of o.failed) process.stderr.write(`  failed ${f.id}: ${f.error.split('\n')[0]}\n`);
    if (o.interrupted) {
      process.stderr.write(`stopped by signal in ${o.interrupted} (checkpoint written); run the same command to resume\n`);
      process.exitCode = 130;
    } else if (o.failed.length) process.exitCode = 1;
  },
};

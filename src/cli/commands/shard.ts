import type { Argv, CommandModule } from 'yargs';
import { parseShardSpec } from '../../util/shard';

/**
 * `ndbg shard [--shard auto|I/N]`: prints "I N", the shard this array-job task works on, so a
 * job script can name its files the way `--shard auto` picks its programs (docs/scale-out.md).
 */
export const shardCommand: CommandModule = {
  command: 'shard',
  describe: 'Print "I N": the shard of this Slurm array / Kubernetes Indexed Job task (for job scripts)',
  builder: (y: Argv) =>
    y
      .option('shard', { type: 'string', default: 'auto', describe: 'auto (from $JOB_COMPLETION_INDEX, $SLURM_ARRAY_TASK_ID, $NDBG_SHARD_INDEX) or I/N' })
      .example('read I N < <($0 shard)', 'in a job script; then --shard $I/$N and files named part-$I'),
  handler: (a) => {
    const s = parseShardSpec(String(a.shard));
    process.stdout.write(`${s.index} ${s.count}\n`);
  },
};

import { UserError } from './errors';

/**
 * Which slice of a job this process does: `--shard I/N`, or `--shard auto` for array jobs, where
 * the scheduler numbers the tasks (docs/scale-out.md):
 *
 * - Kubernetes Indexed Job: `JOB_COMPLETION_INDEX` is the index; Kubernetes does not export the
 *   completion count, so the Job's pod template sets `NDBG_SHARD_COUNT` to `spec.completions`.
 * - Slurm job array: `SLURM_ARRAY_TASK_ID` minus `SLURM_ARRAY_TASK_MIN` (arrays may start at 1),
 *   out of `SLURM_ARRAY_TASK_COUNT`. A strided array (`--array=0-9:2`) is refused: its ids do
 *   not number the tasks 0..N-1.
 * - `NDBG_SHARD_INDEX` / `NDBG_SHARD_COUNT` set by hand override both (any other launcher).
 */
export interface ShardSpec {
  index: number;
  count: number;
}

export type Env = Record<string, string | undefined>;

export function parseShardSpec(spec: string, env: Env = process.env): ShardSpec {
  const s = spec.trim();
  if (s === 'auto') return shardFromEnv(env);
  const m = /^(\d+)\/(\d+)$/.exec(s);
  if (!m) throw new UserError(`--shard ${spec}: expected I/N (e.g. --shard 0/4, I counts from 0) or auto`);
  return checked(Number(m[1]), Number(m[2]), `--shard ${spec}`);
}

function checked(index: number, count: number, what: string): ShardSpec {
  if (!Number.isInteger(count) || count < 1) throw new UserError(`${what}: the shard count must be a positive integer, got ${count}`);
  if (!Number.isInteger(index) || index < 0 || index >= count) throw new UserError(`${what}: need 0 <= I < N, got I=${index}, N=${count}`);
  return { index, count };
}

function intVar(env: Env, name: string): number | undefined {
  const v = env[name];
  if (v === undefined || v.trim() === '') return undefined;
  if (!/^\d+$/.test(v.trim())) throw new UserError(`--shard auto: $${name} must be a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v.trim());
}

function shardFromEnv(env: Env): ShardSpec {
  const count = intVar(env, 'NDBG_SHARD_COUNT');
  const manual = intVar(env, 'NDBG_SHARD_INDEX');
  if (manual !== undefined) {
    if (count === undefined) throw new UserError('--shard auto: $NDBG_SHARD_INDEX is set but $NDBG_SHARD_COUNT is not');
    return checked(manual, count, '--shard auto ($NDBG_SHARD_INDEX of $NDBG_SHARD_COUNT)');
  }
  const k8s = intVar(env, 'JOB_COMPLETION_INDEX');
  if (k8s !== undefined) {
    if (count === undefined) {
      throw new UserError('--shard auto: $JOB_COMPLETION_INDEX is set (Kubernetes Indexed Job) but $NDBG_SHARD_COUNT is not; set it to the Job\'s spec.completions');
    }
    return checked(k8s, count, '--shard auto ($JOB_COMPLETION_INDEX of $NDBG_SHARD_COUNT)');
  }
  const task = intVar(env, 'SLURM_ARRAY_TASK_ID');
  if (task !== undefined) {
    const min = intVar(env, 'SLURM_ARRAY_TASK_MIN') ?? 0;
    const max = intVar(env, 'SLURM_ARRAY_TASK_MAX');
    const slurmCount = count ?? intVar(env, 'SLURM_ARRAY_TASK_COUNT');
    if (slurmCount === undefined) throw new UserError('--shard auto: $SLURM_ARRAY_TASK_ID is set but neither $SLURM_ARRAY_TASK_COUNT nor $NDBG_SHARD_COUNT is');
    const step = intVar(env, 'SLURM_ARRAY_TASK_STEP') ?? 1;
    if (step !== 1 || (max !== undefined && max - min + 1 !== slurmCount)) {
      throw new UserError(`--shard auto: the Slurm array is not a contiguous range (min ${min}, max ${max ?? '?'}, step ${step}, count ${slurmCount}); use --array=0-${slurmCount - 1}`);
    }
    return checked(task - min, slurmCount, '--shard auto ($SLURM_ARRAY_TASK_ID - $SLURM_ARRAY_TASK_MIN of $SLURM_ARRAY_TASK_COUNT)');
  }
  throw new UserError(
    '--shard auto: no array-job index found; set $JOB_COMPLETION_INDEX (Kubernetes), $SLURM_ARRAY_TASK_ID (Slurm) or $NDBG_SHARD_INDEX, with the shard count',
  );
}

/**
 * FNV-1a (32-bit) of the key's UTF-16 code units, mod `count`: the shard a record belongs to.
 * The same function as `ndbg trace --shard` uses for program ids, so every stage of a shard
 * agrees on which programs are its own.
 */
export function shardOfKey(key: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % count;
}

/** `I/N` as people and file names read it, e.g. for logs. */
export function formatShard(s: ShardSpec): string {
  return `${s.index}/${s.count}`;
}

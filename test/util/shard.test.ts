import { parseShardSpec, shardOfKey } from '../../src/util/shard';
import { UserError } from '../../src/util/errors';

describe('--shard I/N and auto', () => {
  it('parses I/N and rejects bad specs with the flag in the message', () => {
    expect(parseShardSpec('2/5', {})).toEqual({ index: 2, count: 5 });
    expect(() => parseShardSpec('5/5', {})).toThrow('--shard 5/5: need 0 <= I < N');
    expect(() => parseShardSpec('1-3', {})).toThrow(UserError);
  });

  it('reads a Kubernetes Indexed Job: $JOB_COMPLETION_INDEX of $NDBG_SHARD_COUNT', () => {
    expect(parseShardSpec('auto', { JOB_COMPLETION_INDEX: '3', NDBG_SHARD_COUNT: '4' })).toEqual({ index: 3, count: 4 });
    expect(() => parseShardSpec('auto', { JOB_COMPLETION_INDEX: '3' })).toThrow("set it to the Job's spec.completions");
    expect(() => parseShardSpec('auto', { JOB_COMPLETION_INDEX: '4', NDBG_SHARD_COUNT: '4' })).toThrow('need 0 <= I < N');
  });

  it('reads a Slurm array, counting from $SLURM_ARRAY_TASK_MIN', () => {
    expect(parseShardSpec('auto', { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '3' })).toEqual({ index: 0, count: 3 });
    const oneBased = { SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_MAX: '3', SLURM_ARRAY_TASK_COUNT: '3' };
    expect(parseShardSpec('auto', oneBased)).toEqual({ index: 2, count: 3 });
    expect(() => parseShardSpec('auto', { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_MIN: '0', SLURM_ARRAY_TASK_MAX: '8', SLURM_ARRAY_TASK_STEP: '2', SLURM_ARRAY_TASK_COUNT: '5' })).toThrow(
      'not a contiguous range',
    );
    expect(() => parseShardSpec('auto', { SLURM_ARRAY_TASK_ID: 'x', SLURM_ARRAY_TASK_COUNT: '3' })).toThrow('$SLURM_ARRAY_TASK_ID must be a non-negative integer');
  });

  it('lets $NDBG_SHARD_INDEX override the schedulers, and says what to set when nothing is there', () => {
    expect(parseShardSpec('auto', { NDBG_SHARD_INDEX: '1', NDBG_SHARD_COUNT: '2', SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '2' })).toEqual({ index: 1, count: 2 });
    expect(() => parseShardSpec('auto', {})).toThrow('$JOB_COMPLETION_INDEX (Kubernetes), $SLURM_ARRAY_TASK_ID (Slurm) or $NDBG_SHARD_INDEX');
  });

  it('hashes keys with 32-bit FNV-1a (the published test vectors), as `ndbg trace --shard` does for program ids', () => {
    expect(shardOfKey('', 2 ** 32)).toBe(0x811c9dc5);
    expect(shardOfKey('a', 2 ** 32)).toBe(0xe40c292c);
    expect(shardOfKey('foobar', 2 ** 32)).toBe(0xbf9cf968);
    expect(shardOfKey('foobar', 3)).toBe(0xbf9cf968 % 3);
  });
});

import { BenchUsageError, choiceFlag, flagValue, intFlag } from '../../bench/flags';

describe('bench flags', () => {
  it('reads --name=value whole, values with = included', () => {
    expect(flagValue(['--set=train.steps=3', '--out=x'], 'set')).toBe('train.steps=3');
    expect(flagValue(['--outdir=y'], 'out')).toBeUndefined();
  });

  it('takes integers at or above the minimum and the fallback when absent', () => {
    expect(intFlag(['--programs=12000'], 'programs', 3000)).toBe(12000);
    expect(intFlag([], 'programs', 3000)).toBe(3000);
    expect(intFlag(['--warmup=0'], 'warmup', 2, 0)).toBe(0);
  });

  it('refuses anything else with a usage error naming the flag', () => {
    for (const bad of ['--programs=0', '--programs=1.5', '--programs=abc', '--programs=']) {
      expect(() => intFlag([bad], 'programs', 3000)).toThrow(BenchUsageError);
      expect(() => intFlag([bad], 'programs', 3000)).toThrow(/^--programs=.*: expected an integer ≥ 1$/);
    }
  });

  it('takes one of the choices, the fallback when absent, and refuses the rest naming them', () => {
    const splits = ['validation', 'test'] as const;
    expect(choiceFlag(['--eval-split=validation'], 'eval-split', splits, 'test')).toBe('validation');
    expect(choiceFlag([], 'eval-split', splits, 'test')).toBe('test');
    expect(() => choiceFlag(['--eval-split=train'], 'eval-split', splits, 'test')).toThrow(new BenchUsageError('--eval-split=train: expected validation or test'));
  });
});

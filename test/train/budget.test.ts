import { fitHorizon } from '../../src/train/trainer';
import { TrainSchema } from '../../src/train/config';

describe('time budget', () => {
  it('fits the schedule horizon to the remaining time at the measured pace', () => {
    // 5 steps done, 2 s per step, 100 s left: 50 more steps.
    expect(fitHorizon(5, 1000, 2, 100)).toBe(55);
    // Never beyond train.steps, never before the current step.
    expect(fitHorizon(5, 20, 2, 100)).toBe(20);
    expect(fitHorizon(5, 1000, 2, -3)).toBe(5);
  });

  it('is optional and must be positive', () => {
    const base = { steps: 10, micro_batch_size: 2 };
    expect(TrainSchema.parse(base).max_minutes).toBeNull();
    expect(TrainSchema.parse({ ...base, max_minutes: 1.5 }).max_minutes).toBe(1.5);
    expect(() => TrainSchema.parse({ ...base, max_minutes: 0 })).toThrow();
  });
});

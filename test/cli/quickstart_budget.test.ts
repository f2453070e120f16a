import { budgetOverrides, DEFAULT_STEPS, describeBudget, MINUTES_MAX_STEPS, QUICKSTART_DEFAULTS, trainBudget } from '../../src/cli/quickstart_options';
import { RunConfigSchema } from '../../src/train/run_config';
import { loadConfig } from '../../src/util/config';
import { assetPath } from '../../src/util/paths';

/** The quickstart's training budget (issue 33): a fixed amount of work by default, time opt-in. */
describe('quickstart training budget', () => {
  test('the default is a step budget, the same on every machine; the eval counts 300 distinct test programs', () => {
    expect(QUICKSTART_DEFAULTS.minutes).toBeNull();
    expect(trainBudget(QUICKSTART_DEFAULTS.minutes, QUICKSTART_DEFAULTS.steps)).toEqual({ kind: 'steps', steps: DEFAULT_STEPS });
    expect(DEFAULT_STEPS).toBe(2500);
    expect(QUICKSTART_DEFAULTS.evalPrograms).toBeGreaterThanOrEqual(300);
    expect(QUICKSTART_DEFAULTS.evalSplit).toBe('test');
  });

  test('--minutes is a time budget with a step cap; --steps sets either', () => {
    expect(trainBudget(10, null)).toEqual({ kind: 'minutes', minutes: 10, maxSteps: MINUTES_MAX_STEPS });
    expect(trainBudget(10, 500)).toEqual({ kind: 'minutes', minutes: 10, maxSteps: 500 });
    expect(trainBudget(null, 250)).toEqual({ kind: 'steps', steps: 250 });
    expect(describeBudget(trainBudget(10, null))).toMatch(/depend on this machine/);
    expect(() => trainBudget(0, null)).toThrow(/--minutes 0/);
    expect(() => trainBudget(null, 2.5)).toThrow(/--steps 2.5/);
  });

  test('a step budget sizes the LR schedule to the steps: train.steps is the horizon, no time budget', () => {
    const file = assetPath('configs/quickstart.json');
    const steps = loadConfig(RunConfigSchema, { file, overrides: budgetOverrides(trainBudget(null, null)) });
    expect(steps.train.steps).toBe(DEFAULT_STEPS);
    expect(steps.train.max_minutes).toBeNull();
    // The recipe trains the blocks' matrices with Muon (docs/train.md).
    expect(steps.optim.muon).toEqual({ momentum: 0.95, ns_steps: 5, update_scale: 0.2 });
    // Warmup is a small part of the run, so the cosine decays over nearly all of it.
    expect(steps.optim.schedule.warmup_steps).toBeLessThan(DEFAULT_STEPS / 20);
    const minutes = loadConfig(RunConfigSchema, { file, overrides: budgetOverrides(trainBudget(15, null)) });
    expect([minutes.train.steps, minutes.train.max_minutes]).toEqual([MINUTES_MAX_STEPS, 15]);
  });
});

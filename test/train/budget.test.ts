import { CALIBRATION_STEPS, fitHorizon, PaceEstimate, paceEstimate, TimeBudget } from '../../src/train/time_budget';
import { TrainSchema } from '../../src/train/config';

/** Drives a budget with a fake clock: step i (1-based) ends at stepEndMs(i). */
function run(budget: TimeBudget, upTo: number, stepEndMs: (step: number) => number) {
  const events: Array<{ step: number; kind: string; horizon: number }> = [];
  const states: string[] = [];
  for (let step = 1; step <= upTo && step <= budget.horizon; step++) {
    const e = budget.afterStep(step, stepEndMs(step));
    if (e) events.push({ step, kind: e.kind, horizon: e.horizon });
    states.push(budget.state.kind);
  }
  return { events, states };
}

describe('time budget', () => {
  it('fits the schedule horizon to the remaining time at the measured pace', () => {
    // 5 steps done, 2 s per step, 100 s left: 50 more steps.
    expect(fitHorizon(5, 1000, 2, 100)).toBe(55);
    // Never beyond train.steps, never before the current step.
    expect(fitHorizon(5, 20, 2, 100)).toBe(20);
    expect(fitHorizon(5, 1000, 2, -3)).toBe(5);
  });

  it('without a budget stays unlimited at train.steps', () => {
    const b = new TimeBudget(null, 50, 0, 0);
    const { events, states } = run(b, 50, (s) => s * 1e6);
    expect(events).toEqual([]);
    expect(new Set(states)).toEqual(new Set(['unlimited']));
    expect(b.horizon).toBe(50);
  });

  it('skips the slow first step, fits after calibration, refits at a quarter of the run and then halfway through the rest', () => {
    // 1 minute. The first step takes 10 s (setup); then 0.5 s per step until step 30, 0.25 s after.
    const at = (s: number) => 1000 * (s <= 1 ? 10 : s <= 30 ? 10 + 0.5 * (s - 1) : 10 + 0.5 * 29 + 0.25 * (s - 30));
    const b = new TimeBudget(1, 10_000, 0, 0);
    expect(b.state.kind).toBe('warmup');
    const { events, states } = run(b, 10_000, at);
    expect(states[0]).toBe('calibrating');
    // After step 20: 19 steps in 9.5 s since step 1 (0.5 s/step), 60 - 19.5 = 40.5 s left → 81 more.
    expect(events[0]).toEqual({ step: CALIBRATION_STEPS, kind: 'fitted', horizon: 20 + 81 });
    expect(states[CALIBRATION_STEPS - 1]).toBe('refining');
    // Refit at max(40, round(101 / 4)) = 40 with the pace since step 20: 10 steps at 0.5, 10 at 0.25 s.
    const paceS = (at(40) - at(20)) / 1000 / 20;
    const h1 = fitHorizon(40, 10_000, paceS, 60 - at(40) / 1000);
    expect(events[1]).toEqual({ step: 40, kind: 'fitted', horizon: h1 });
    // That mixed pace underestimates the steps left (the run would end ~11 s early); halfway through
    // the rest, the pace since step 40 (0.25 s) fits the horizon to the budget.
    const half = 40 + Math.ceil((h1 - 40) / 2);
    expect(events[2]).toEqual({ step: half, kind: 'fitted', horizon: fitHorizon(half, 10_000, 0.25, 60 - at(half) / 1000) });
    // The steady pace then refits to the same horizon (no more events) and the run spends the budget.
    expect(events).toHaveLength(3);
    expect(b.state.kind).toBe('final');
    expect(at(b.horizon) / 1000).toBeLessThanOrEqual(60);
    expect(at(b.horizon + 1) / 1000).toBeGreaterThan(60);
  });

  it('refits by time as well as by steps, so a slowdown after a refit still ends with the schedule decayed', () => {
    // 1 minute. 0.25 s per step for the first 20 s, then 1 s per step (a neighbour's job starts).
    const at = (s: number) => 1000 * (s <= 80 ? 0.25 * s : 20 + (s - 80));
    const b = new TimeBudget(1, 10_000, 0, 0);
    const { events } = run(b, 10_000, at);
    const fits = events.filter((e) => e.kind === 'fitted');
    // Counted in steps alone, the refit after the quarter one (step ~60) would fall at step ~150,
    // past the deadline: the horizon would stay ~240 and the run stop at ~120 with the LR undecayed.
    expect(fits.length).toBeGreaterThanOrEqual(3);
    const lastFit = fits[fits.length - 1];
    const end = events[events.length - 1];
    const endStep = end.kind === 'spent' ? end.step : b.horizon;
    expect(lastFit.horizon).toBeLessThanOrEqual(endStep + 3);
    expect(at(endStep) / 1000).toBeLessThanOrEqual(60);
  });

  it('ends the run at the step that spends the budget, in any state', () => {
    // Steps of 10 s with a 1-minute budget: spent at step 6, before calibration is done.
    const b = new TimeBudget(1, 1000, 0, 0);
    const { events } = run(b, 1000, (s) => s * 10_000);
    expect(events).toEqual([{ step: 6, kind: 'spent', horizon: 6 }]);
    expect(b.horizon).toBe(6);
  });

  it('counts calibration from the resumed step', () => {
    const b = new TimeBudget(1, 1000, 100, 0);
    const events: number[] = [];
    for (let step = 101; step <= 100 + CALIBRATION_STEPS; step++) if (b.afterStep(step, (step - 100) * 100)) events.push(step);
    expect(events).toEqual([100 + CALIBRATION_STEPS]);
    expect(b.state.kind).toBe('refining');
  });

  it('is optional and must be positive', () => {
    const base = { steps: 10, micro_batch_size: 2 };
    expect(TrainSchema.parse(base).max_minutes).toBeNull();
    expect(TrainSchema.parse({ ...base, max_minutes: 1.5 }).max_minutes).toBe(1.5);
    expect(() => TrainSchema.parse({ ...base, max_minutes: 0 })).toThrow();
  });
});

describe('step budget time estimate', () => {
  it('says once, after the calibration steps, how long the rest takes at the measured pace', () => {
    // Step 1 pays setup (10 s); then 0.25 s and 2,048 tokens a step: 8,192 tokens/s.
    const pace = new PaceEstimate(4000, 0);
    const lines: Array<[number, string]> = [];
    for (let step = 1; step <= 40; step++) {
      const line = pace.afterStep(step, 2048 * step, 10000 + (step - 1) * 250);
      if (line) lines.push([step, line]);
    }
    expect(lines).toEqual([[CALIBRATION_STEPS, 'step 20 of 4000: ~17 min left at 8192 tokens/s (this machine\'s pace; the step budget, not the pace, fixes the model)']]);
  });

  it('counts from the resumed step and stays quiet when the run is shorter than the calibration', () => {
    expect(paceEstimate(120, 200, 3, 700)).toMatch(/^step 120 of 200: ~4\.0 min left at 700 tokens\/s/);
    const short = new PaceEstimate(10, 0);
    for (let step = 1; step <= 10; step++) expect(short.afterStep(step, step, step * 1000)).toBeUndefined();
    const resumed = new PaceEstimate(1000, 500);
    const got = Array.from({ length: 30 }, (_, i) => resumed.afterStep(501 + i, 0, i * 1000)).filter(Boolean);
    expect(got).toEqual([expect.stringMatching(/^step 520 of 1000: ~8\.0 min left/)]);
  });
});

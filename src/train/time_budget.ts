/**
 * train.max_minutes: a wall-clock budget that fixes the LR schedule's horizon (the step count
 * the schedule decays over) from the measured pace, so a budgeted run ends with a fully decayed
 * schedule instead of being cut mid-way.
 *
 * States, in order (each step's end moves the budget along):
 *   unlimited    no budget: the horizon is train.steps, nothing else happens;
 *   warmup       the first step has not ended: it pays one-off costs (kernel setup, first shard
 *                loads), so it is not timed;
 *   calibrating  timing the steps after the first, until CALIBRATION_STEPS are done; then the
 *                horizon is fitted to the remaining time;
 *   refining     fitted once; at a quarter of the run it is fitted again with the pace of the
 *                steps since the last fit (the first ones are slower), then again halfway through
 *                each remaining stretch — of steps or of time, whichever comes first — so a pace
 *                that changes mid-run (a neighbour's job starting or ending on a shared machine)
 *                moves the horizon instead of ending the run early or cutting it at the deadline
 *                with the schedule undecayed (a slowdown would push a step-counted refit past the
 *                deadline);
 *   final        fewer than MIN_PACE_STEPS steps remain: the horizon stays.
 * In every state but unlimited, a step that ends with the budget spent ends the run there.
 */
export type BudgetState =
  | { kind: 'unlimited' }
  | { kind: 'warmup' }
  | { kind: 'calibrating'; since: number }
  | { kind: 'refining'; since: number; sinceStep: number; refitAt: number; refitAtS: number }
  | { kind: 'final' };

/** What a step's end changed: the horizon was fitted to the pace, or the budget ran out. */
export interface BudgetEvent {
  kind: 'fitted' | 'spent';
  horizon: number;
  message: string;
}

/**
 * Steps timed before a time budget fixes the schedule's horizon. Warmup LRs do not depend on the
 * horizon, so with warmup_steps ≥ this the schedule is the one a fixed-step run would have used.
 */
export const CALIBRATION_STEPS = 20;

/** Fewest steps a refit measures the pace over; with fewer left the horizon stays. */
const MIN_PACE_STEPS = 5;

/** The last step that fits the remaining time at the measured pace (never beyond maxSteps). */
export function fitHorizon(step: number, maxSteps: number, secondsPerStep: number, remainingS: number): number {
  return Math.min(maxSteps, step + Math.max(0, Math.floor(remainingS / Math.max(secondsPerStep, 1e-9))));
}

export class TimeBudget {
  /** The schedule's horizon: train.steps, or fewer when the budget allows fewer. */
  horizon: number;
  state: BudgetState;
  private readonly budgetS: number;

  /** Times are milliseconds on one clock (performance.now()); startMs is when the loop began. */
  constructor(
    private readonly maxMinutes: number | null,
    private readonly maxSteps: number,
    private readonly startStep: number,
    private readonly startMs: number,
  ) {
    this.horizon = maxSteps;
    this.budgetS = maxMinutes === null ? Infinity : maxMinutes * 60;
    this.state = maxMinutes === null ? { kind: 'unlimited' } : { kind: 'warmup' };
  }

  /** Called when step `step` (1-based: updates done) ended at nowMs. */
  afterStep(step: number, nowMs: number): BudgetEvent | undefined {
    const s = this.state;
    if (s.kind === 'unlimited') return undefined;
    const spentS = (nowMs - this.startMs) / 1000;
    if (s.kind === 'warmup' && step === this.startStep + 1) this.state = { kind: 'calibrating', since: nowMs };
    if (s.kind === 'calibrating' && step === this.startStep + CALIBRATION_STEPS) {
      this.fit(step, nowMs, s.since, this.startStep + 1, spentS);
      const refitAt = this.startStep + Math.max(2 * CALIBRATION_STEPS, Math.round((this.horizon - this.startStep) / 4));
      this.state = { kind: 'refining', since: nowMs, sinceStep: step, refitAt, refitAtS: spentS + (this.budgetS - spentS) / 4 };
      return this.fitted();
    }
    if (s.kind === 'refining' && (step >= s.refitAt || spentS >= s.refitAtS) && step - s.sinceStep >= MIN_PACE_STEPS) {
      const before = this.horizon;
      this.fit(step, nowMs, s.since, s.sinceStep, spentS);
      const remaining = this.horizon - step;
      this.state =
        remaining < MIN_PACE_STEPS
          ? { kind: 'final' }
          : { kind: 'refining', since: nowMs, sinceStep: step, refitAt: step + Math.ceil(remaining / 2), refitAtS: spentS + (this.budgetS - spentS) / 2 };
      // A steady pace refits to the same horizon: nothing to report.
      if (this.horizon !== before) return this.fitted();
    }
    if (spentS >= this.budgetS && step < this.horizon) {
      this.horizon = step;
      return { kind: 'spent', horizon: step, message: `time budget ${this.maxMinutes} min reached at step ${step}` };
    }
    return undefined;
  }

  private fit(step: number, nowMs: number, sinceMs: number, sinceStep: number, spentS: number): void {
    const pace = (nowMs - sinceMs) / 1000 / (step - sinceStep);
    this.horizon = fitHorizon(step, this.maxSteps, pace, this.budgetS - spentS);
  }

  private fitted(): BudgetEvent {
    return { kind: 'fitted', horizon: this.horizon, message: `time budget ${this.maxMinutes} min: training for ${this.horizon} steps (schedule horizon)` };
  }
}

/** The line a step budget prints once its pace is measured: how long the rest takes here. */
export function paceEstimate(step: number, total: number, secondsPerStep: number, tokensPerS: number): string {
  const minutes = ((total - step) * secondsPerStep) / 60;
  const left = minutes < 10 ? minutes.toFixed(1) : String(Math.round(minutes));
  return `step ${step} of ${total}: ~${left} min left at ${Math.round(tokensPerS)} tokens/s (this machine's pace; the step budget, not the pace, fixes the model)`;
}

/**
 * A step budget's time estimate: timed from the end of the first step (which pays one-off
 * setup, as in TimeBudget) to step CALIBRATION_STEPS, then said once, so a user knows early how
 * long a fixed amount of work takes on this machine.
 */
export class PaceEstimate {
  private from?: { step: number; tokens: number; ms: number };

  constructor(
    private readonly total: number,
    private readonly startStep: number,
  ) {}

  /** Called when step `step` (1-based) ended at nowMs with `tokens` seen in all; the line, once. */
  afterStep(step: number, tokens: number, nowMs: number): string | undefined {
    if (step === this.startStep + 1) this.from = { step, tokens, ms: nowMs };
    if (!this.from || step !== this.startStep + CALIBRATION_STEPS || step >= this.total) return undefined;
    const seconds = Math.max((nowMs - this.from.ms) / 1000, 1e-9);
    return paceEstimate(step, this.total, seconds / (step - this.from.step), (tokens - this.from.tokens) / seconds);
  }
}

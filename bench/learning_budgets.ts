import { BenchUsageError, flagValue } from './flags';

/**
 * The quickstart's budget, and the "120-minute point": 20,000 steps of the Muon recipe take
 * about 2 hours on a 2-core machine whose AdamW step trains 8k tokens/s (a Muon step costs
 * 1.3–1.45× an AdamW one: docs/train.md, "Muon").
 */
const DEFAULT_STEP_BUDGETS = '2500,20000';

export type Budgets = { kind: 'steps'; values: number[] } | { kind: 'minutes'; values: number[] };

/**
 * The learning bench's budgets: work (--steps, the default: the same models on every machine)
 * or, opt-in, wall-clock minutes (--minutes: the models depend on the machine's speed).
 */
export function budgetsOf(args: string[]): Budgets {
  const minutes = flagValue(args, 'minutes');
  const steps = flagValue(args, 'steps');
  if (minutes !== undefined && steps !== undefined) throw new BenchUsageError('give --steps or --minutes, not both');
  const values = (minutes ?? steps ?? DEFAULT_STEP_BUDGETS).split(',').map(Number);
  if (minutes !== undefined) {
    if (values.some((m) => !(m > 0))) throw new BenchUsageError(`--minutes=${minutes}: expected positive numbers, e.g. 10,120`);
    return { kind: 'minutes', values };
  }
  if (values.some((n) => !(Number.isInteger(n) && n > 0))) throw new BenchUsageError(`--steps=${steps}: expected positive whole numbers, e.g. 2500,20000`);
  return { kind: 'steps', values };
}

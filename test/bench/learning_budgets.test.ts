import { BenchUsageError } from '../../bench/flags';
import { budgetsOf } from '../../bench/learning_budgets';

describe('learning bench budgets', () => {
  it('defaults to work budgets: the quickstart steps and the old 120-minute point', () => {
    expect(budgetsOf([])).toEqual({ kind: 'steps', values: [2500, 20000] });
    expect(budgetsOf(['--steps=100,200'])).toEqual({ kind: 'steps', values: [100, 200] });
  });

  it('takes wall-clock minutes only when asked', () => {
    expect(budgetsOf(['--minutes=10,120'])).toEqual({ kind: 'minutes', values: [10, 120] });
  });

  it('refuses both kinds at once and budgets that are not positive', () => {
    expect(() => budgetsOf(['--steps=10', '--minutes=1'])).toThrow(BenchUsageError);
    expect(() => budgetsOf(['--steps=10,1.5'])).toThrow(/^--steps=10,1.5: expected positive whole numbers/);
    expect(() => budgetsOf(['--minutes=0'])).toThrow(/^--minutes=0: expected positive numbers/);
  });
});

import { MAX_NDL_EPOCHS, ndlEpochs, programsFor } from '../../src/cli/ndl_epochs';
import { QUICKSTART_WEIGHTS } from '../../src/cli/quickstart_options';

describe('NDL epochs of a run', () => {
  it('counts the NDL share of the tokens a run reads against the NDL tokens there are', () => {
    expect(ndlEpochs(1_000_000, 1_000_000)).toBeCloseTo(QUICKSTART_WEIGHTS.ndl);
    expect(ndlEpochs(9_000_000, 40_000_000)).toBeCloseTo(4);
  });

  it('sizes the programs so that a budget reads each document at most twice', () => {
    const tokens = 28000 * 2048;
    const programs = programsFor(tokens, 2700, 7000);
    expect(ndlEpochs(programs * 2700, tokens)).toBeLessThanOrEqual(MAX_NDL_EPOCHS);
    // Not far above what is needed: within the 5% margin.
    expect(ndlEpochs(programs * 2700, tokens)).toBeGreaterThan(MAX_NDL_EPOCHS / 1.06);
  });

  it('never asks for fewer programs than the floor', () => {
    expect(programsFor(4000 * 2048, 2700, 7000)).toBe(7000);
  });
});

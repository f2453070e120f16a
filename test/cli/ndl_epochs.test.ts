import { MAX_NDL_EPOCHS, ndlEpochs, programsFor } from '../../src/cli/ndl_epochs';
import { DEFAULT_MINED_SHARE, quickstartWeights } from '../../src/cli/quickstart_options';

describe('NDL epochs of a run', () => {
  it('counts the NDL share of the tokens a run reads against the NDL tokens there are', () => {
    expect(ndlEpochs(1_000_000, 1_000_000)).toBeCloseTo(quickstartWeights(DEFAULT_MINED_SHARE).ndl);
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

describe("the quickstart's mixture", () => {
  it('takes the mined share from the code source first, then from the generated programs', () => {
    expect(quickstartWeights(0)).toEqual({ ndl: 0.9, code: 0.1, mined: 0 });
    expect(quickstartWeights(0.05)).toEqual({ ndl: 0.9, code: expect.closeTo(0.05, 12), mined: 0.05 });
    expect(quickstartWeights(0.1)).toEqual({ ndl: 0.9, code: 0, mined: 0.1 });
    const w = quickstartWeights(0.3);
    expect(w.ndl).toBeCloseTo(0.7, 12);
    expect(w.ndl + w.code + w.mined).toBeCloseTo(1, 12);
    expect(ndlEpochs(1_000_000, 1_000_000, w.ndl)).toBeCloseTo(0.7, 12);
  });

  it('refuses a share outside [0, 1), naming the flag', () => {
    expect(() => quickstartWeights(-0.1)).toThrow('--mined-share -0.1: expected a share in [0, 1)');
    expect(() => quickstartWeights(1)).toThrow(/--mined-share 1:/);
    expect(() => quickstartWeights(NaN)).toThrow(/--mined-share NaN:/);
  });
});

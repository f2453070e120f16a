import { copyProbeRows, modelLogProbs, runCopyProbe, type NextTokenLogProbs } from '../../src/eval/copy_probe';
import { initBackend } from '../../src/backend/backend';
import { testConfig, testModel } from '../model/helpers';

const V = 50;
const options = { seed: 3, sequences: 6, length: 10, bosId: 1, pieceIds: Array.from({ length: 40 }, (_, i) => 10 + i) };

/** Uniform everywhere except where `pick(ids, t)` names a token: all mass there. */
function predictor(pick: (ids: Int32Array, t: number) => number | undefined): NextTokenLogProbs {
  return (ids) =>
    Array.from(ids, (_, t) => {
      const row = new Float32Array(V).fill(-Math.log(V));
      const id = pick(ids, t);
      if (id !== undefined) {
        row.fill(-1e9);
        row[id] = 0;
      }
      return row;
    });
}

describe('copy probe', () => {
  test('rows are BOS, a seeded random sequence of the given pieces, and the same sequence again', () => {
    const rows = copyProbeRows(options);
    expect(rows).toHaveLength(6);
    for (const r of rows) {
      expect(r.length).toBe(21);
      expect(r[0]).toBe(1);
      expect(Array.from(r.subarray(1, 11))).toEqual(Array.from(r.subarray(11)));
      for (const id of r.subarray(1)) expect(options.pieceIds).toContain(id);
    }
    expect(copyProbeRows(options)).toEqual(rows);
    expect(copyProbeRows({ ...options, seed: 4 })).not.toEqual(rows);
  });

  test('a model that copies the token one period back scores 100% on the repeat; one that does not scores chance', () => {
    // Position t predicts ids[t + 1]; in the second copy that equals ids[t + 1 − length].
    const copier = predictor((ids, t) => (t + 1 > options.length + 1 ? ids[t + 1 - options.length] : undefined));
    const c = runCopyProbe(copier, options);
    expect(c.repeatAccuracy).toBe(1);
    expect(c.nllRepeat).toBeCloseTo(0, 6);
    expect(c.nllFirst).toBeCloseTo(Math.log(V), 5);

    const uniform = runCopyProbe(predictor(() => undefined), options);
    expect(uniform.repeatAccuracy).toBe(0);
    expect(uniform.nllRepeat).toBeCloseTo(uniform.nllFirst, 6);

    // A predictor that peeks one step too far (the token it should predict) is not a copier of
    // the first copy: the first copy's positions stay at chance in a copier, and the first
    // position of the second copy is not counted (nothing before it predicts it).
    const offByOne = runCopyProbe(predictor((ids, t) => (t + 1 > options.length + 1 ? ids[t - options.length] : undefined)), options);
    expect(offByOne.repeatAccuracy).toBeLessThan(0.2);
  });

  test("modelLogProbs gives a real model's normalised next-token log-probabilities per position", async () => {
    await initBackend('wasm', () => undefined);
    const config = testConfig({ vocab_size: V, max_seq_len: 32 });
    const model = testModel(config, 2);
    const [row] = copyProbeRows({ ...options, sequences: 1 });
    const lp = modelLogProbs(model)(row);
    expect(lp).toHaveLength(row.length);
    const logits = model.logits([row]).arraySync()[0];
    for (let t = 0; t < row.length; t++) {
      expect(lp[t].reduce((s, x) => s + Math.exp(x), 0)).toBeCloseTo(1, 4);
      // Same ranking as the logits at the same position (log-softmax is a shift per row).
      expect(lp[t][5] - lp[t][7]).toBeCloseTo(logits[t][5] - logits[t][7], 4);
    }
    // An untrained model does not copy.
    expect(runCopyProbe(modelLogProbs(model), options).repeatAccuracy).toBeLessThan(0.3);
  });
});

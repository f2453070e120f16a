import { allStepDocuments } from '../../src/ndl/generate';
import { countProgram, fixture, traceAll } from './helpers';

describe('canonical documents (spec reference)', () => {
  it('forward (all step_into) and inverse (all inv_step_into) equal the reference byte for byte', () => {
    const [trace] = traceAll([countProgram()]);
    const docs = allStepDocuments(trace);
    expect(docs.map((d) => d.direction)).toEqual(['forward', 'inverse']);
    expect(docs[0].text).toBe(fixture('count.forward.ndl'));
    expect(docs[1].text).toBe(fixture('count.inverse.ndl'));
  });
});

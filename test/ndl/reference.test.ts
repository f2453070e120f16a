import { allStepDocuments } from '../../src/ndl/generate';
import { countProgram, traceAll } from './helpers';
import { reference } from '../helpers/reference';

describe('canonical documents (spec reference)', () => {
  it('forward (all step_into) and inverse (all inv_step_into) equal the reference byte for byte', () => {
    const [trace] = traceAll([countProgram()]);
    const docs = allStepDocuments(trace);
    expect(docs.map((d) => d.direction)).toEqual(['forward', 'inverse']);
    expect(docs[0].text).toBe(reference('count.forward.ndl'));
    expect(docs[1].text).toBe(reference('count.inverse.ndl'));
  });
});

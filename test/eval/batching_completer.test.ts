import { BatchingCompleter } from '../../src/eval/batching_completer';
import { PromptTooLongError, type TextCompleter } from '../../src/eval/completer';

/** Answers `upper(prefix)`; refuses prefixes that start with "!"; records each batch it is given. */
function fakeCompleter(batches: string[][]): TextCompleter & Required<Pick<TextCompleter, 'completeFrames'>> {
  const one = async (p: string) => {
    if (p.startsWith('!')) throw new PromptTooLongError(999, 10);
    return p.toUpperCase();
  };
  return {
    name: 'fake',
    completeFrame: one,
    async completeFrames(prefixes) {
      batches.push(prefixes);
      const out: string[] = [];
      for (const p of prefixes) out.push(await one(p));
      return out;
    },
  };
}

describe('BatchingCompleter', () => {
  test('calls made together become one batch; each caller gets its own answer; later calls form the next batch', async () => {
    const batches: string[][] = [];
    const c = new BatchingCompleter(fakeCompleter(batches));
    // Three callers, each making two calls in turn (as debug sessions do).
    const caller = async (name: string) => [await c.completeFrame(`${name}1`), await c.completeFrame(`${name}2`)];
    expect(await Promise.all(['a', 'b', 'c'].map(caller))).toEqual([['A1', 'A2'], ['B1', 'B2'], ['C1', 'C2']]);
    expect(batches).toEqual([['a1', 'b1', 'c1'], ['a2', 'b2', 'c2']]);
  });

  test('one failing prompt fails only its caller; different options are different batches', async () => {
    const batches: string[][] = [];
    const c = new BatchingCompleter(fakeCompleter(batches));
    const results = await Promise.allSettled([c.completeFrame('x'), c.completeFrame('!y'), c.completeFrame('z', { temperature: 1 })]);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'X' });
    expect(results[1].status).toBe('rejected');
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(PromptTooLongError);
    expect(results[2]).toEqual({ status: 'fulfilled', value: 'Z' });
    expect(batches).toEqual([['x', '!y'], ['z']]);
  });
});

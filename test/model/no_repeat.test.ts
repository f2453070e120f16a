import { initBackend } from '../../src/backend/backend';
import { generate } from '../../src/model/generate';
import { repeatedNgramEnds, withoutRepeatedNgrams } from '../../src/model/no_repeat';
import { testConfig, testModel } from './helpers';

/** Each n-gram of `ids` with how often it occurs, where more than once. */
function repeats(ids: readonly number[], n: number): string[] {
  const seen = new Map<string, number>();
  for (let i = 0; i + n <= ids.length; i++) {
    const key = ids.slice(i, i + n).join(',');
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  return [...seen].filter(([, k]) => k > 1).map(([g, k]) => `${g} ×${k}`);
}

describe('no repeated n-grams', () => {
  beforeAll(async () => {
    await initBackend('wasm', () => undefined);
  });

  test('bans exactly the tokens that would complete an n-gram already written', () => {
    // "1 , 1 , 1": after "... , 1" the 3-gram ", 1 ," is there, so "," is banned; 9 completes nothing.
    expect([...repeatedNgramEnds([7, 1, 2, 1, 2, 1], 3)]).toEqual([2]);
    expect([...repeatedNgramEnds([7, 1, 2, 1, 2, 1], 4)]).toEqual([2]);
    expect([...repeatedNgramEnds([7, 1, 2, 1, 2, 1], 5)]).toEqual([]);
    expect([...repeatedNgramEnds([5, 6, 5], 2)]).toEqual([6]);
    expect([...repeatedNgramEnds([5], 2)]).toEqual([]);
    expect([...repeatedNgramEnds([], 1)]).toEqual([]);
    expect([...repeatedNgramEnds([4, 4, 3], 1)].sort()).toEqual([3, 4]);
  });

  test("keeps the underlying constraint, and never empties it", () => {
    const only = (ids: number[]) => () => new Set(ids);
    expect(withoutRepeatedNgrams(only([6, 9]), 2, 10)([5, 6, 5])).toEqual(new Set([9]));
    expect(withoutRepeatedNgrams(only([6]), 2, 10)([5, 6, 5])).toEqual(new Set([6]));
    expect(withoutRepeatedNgrams(undefined, 2, 4)([1, 2, 1])).toEqual(new Set([0, 1, 3]));
    expect(withoutRepeatedNgrams(undefined, 2, 4)([1, 2, 3])).toBeUndefined();
  });

  test('a random model that loops greedily writes no n-gram twice under the ban', () => {
    const m = testModel(testConfig({ max_seq_len: 64 }), 5);
    const prompt = [3, 1, 4, 1, 5];
    const free = generate(m, prompt, { maxNewTokens: 40, greedy: true }).ids;
    expect(repeats(free, 3).length).toBeGreaterThan(0);
    const banned = generate(m, prompt, { maxNewTokens: 40, greedy: true, allowedTokens: withoutRepeatedNgrams(undefined, 3, 37) }).ids;
    expect(banned).toHaveLength(40);
    expect(repeats(banned, 3)).toEqual([]);
    m.dispose();
  });
});

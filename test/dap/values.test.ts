import { childrenOf } from '../../src/dap/values';

describe('childrenOf (the variables view of a repr)', () => {
  test('lists, tuples, dicts and sets split at their top level; strings with brackets and commas stay whole', () => {
    expect(childrenOf("[1, 'a, b', [2, 3]]")).toEqual([
      { name: '[0]', value: '1' },
      { name: '[1]', value: "'a, b'" },
      { name: '[2]', value: '[2, 3]' },
    ]);
    expect(childrenOf("{'k': {'x': (1, 2)}, 'q]': 3}")).toEqual([
      { name: "'k'", value: "{'x': (1, 2)}" },
      { name: "'q]'", value: '3' },
    ]);
    expect(childrenOf('(3,)')).toEqual([{ name: '[0]', value: '3' }]);
    expect(childrenOf('{1, 2}')).toEqual([{ name: '{0}', value: '1' }, { name: '{1}', value: '2' }]);
  });

  test('leaves: scalars, empty containers, reprs cut in the middle, object reprs, parenthesised non-tuples', () => {
    for (const leaf of ['3', "'[1, 2]'", '[]', '{}', '[1, 2, ...9, 10]x', '<Box object at 0x…>', '(3)', '[1, 2][0]']) expect(childrenOf(leaf)).toBeUndefined();
    expect(childrenOf('[1, 2, ... 8, 9]')).toEqual([{ name: '[0]', value: '1' }, { name: '[1]', value: '2' }, { name: '[2]', value: '... 8' }, { name: '[3]', value: '9' }]);
  });
});

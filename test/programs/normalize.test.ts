import { codeFacts } from '../../src/programs/normalize';

describe('codeFacts (normalized AST)', () => {
  test('renaming identifiers keeps the hash; constants, structure and attributes change it', async () => {
    const base = 'def f(nums):\n    out = []\n    for n in nums:\n        out.append(n * 2)\n    return out\n';
    const renamed = 'def g(values):\n    """Doubles."""\n    res = []\n    for v in values:\n        res.append(v * 2)\n    return res\n';
    const constant = base.replace('n * 2', 'n * 3');
    const method = base.replace('append', 'insert');
    const [a, b, c, d] = await codeFacts([base, renamed, constant, method]);
    expect(a.ok).toBe(true);
    expect(b.ast).toBe(a.ast);
    expect(c.ast).not.toBe(a.ast);
    expect(c.shape).toBe(a.shape);
    expect(d.ast).not.toBe(a.ast);
  });

  test('reports syntax errors, imports and risky builtins', async () => {
    const [bad, imp, risky] = await codeFacts(['def f(:\n', 'import os\nfrom collections import Counter\ndef f(x):\n    return x', 'def f(x):\n    return id(x)']);
    expect(bad.ok).toBe(false);
    expect(bad.error).toMatch(/SyntaxError/);
    expect(imp.imports).toEqual(['collections', 'os']);
    expect(risky.risky).toEqual(['id']);
  });
});

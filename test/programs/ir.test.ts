import { spawnSync } from 'child_process';
import { pyStr } from '../../src/programs/ir';

describe('pyStr', () => {
  test("writes the generator's alphabets as before: plain quotes, only backslashes and the quote escaped", () => {
    expect(pyStr('ab c')).toBe("'ab c'");
    expect(pyStr("it's")).toBe(`"it's"`);
    expect(pyStr('a\\b')).toBe("'a\\\\b'");
    expect(pyStr(`say "it's"`)).toBe(`"say \\"it's\\""`);
  });

  test('any text reads back in Python as the same string, lone surrogates and controls included', () => {
    // Text a mined function's own literals hold (graphql's lexer compares with lone surrogates).
    const texts = ['dog-blue \udbff \udc00', '\udbff\udc00', 'tab\there\nnew\rline', 'nul\x00bell\x07', 'nbsp\u00a0sep\u2028', 'é ü 中文 😀', "both ' and \"", '\\'];
    const literals = texts.map(pyStr);
    for (const lit of literals) expect(Buffer.from(lit, 'utf8').toString('utf8')).toBe(lit);
    const script = 'import ast, json, sys\nprint(json.dumps([ast.literal_eval(l) for l in json.load(sys.stdin)]))';
    const res = spawnSync('python3', ['-c', script], { input: JSON.stringify(literals), encoding: 'utf8' });
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout)).toEqual(texts);
  });
});

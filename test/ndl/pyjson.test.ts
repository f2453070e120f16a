import { execFileSync } from 'child_process';
import { dumpsEntries, dumpsString, dumpsValue, readNdlJson } from '../../src/ndl/pyjson';

/** Python's own json.dumps of each value (one JSON text per line). */
function pythonDumps(values: unknown[]): string[] {
  const script = 'import json,sys\nfor line in sys.stdin:\n    print(json.dumps(json.loads(line)))\n';
  const out = execFileSync('python3', ['-c', script], { input: values.map((v) => JSON.stringify(v)).join('\n') + '\n' });
  return out.toString('utf8').trimEnd().split('\n');
}

const TRICKY = [
  '',
  'plain',
  "'berry'",
  'say "hi"',
  'back\\slash \\n not a newline',
  'new\nline\ttab\rcr\bbs\ffeed',
  '\u0000\u0001\u001f',
  '\u007f del',
  'café ñ ü',
  '日本語',
  'emoji 😀 and 𝄞',
  'lone \ud800 high and \udfff low',
  '\u2028\u2029',
  '<|frame_sep|> looks special',
  "b'\\x00\\xff'",
  '~ !#$%&()*+,-./:;<=>?@[]^_`{|}',
];

describe('Python-compatible JSON', () => {
  it('dumpsString equals json.dumps on tricky strings', () => {
    expect(TRICKY.map(dumpsString)).toEqual(pythonDumps(TRICKY));
  });

  it('dumpsEntries equals json.dumps of a dict, keeping order', () => {
    const dicts = [{}, { s: "'berry'", t: "'r'" }, { '..': '..', n: '0' }, { z: '1', a: '2', 'é': 'ü\n' }];
    expect(dicts.map((d) => dumpsEntries(Object.entries(d)))).toEqual(pythonDumps(dicts));
  });

  it('dumpsValue writes null as JSON null', () => {
    expect(dumpsValue(null)).toBe('null');
    expect(dumpsValue("ValueError('bad')")).toBe(pythonDumps(["ValueError('bad')"])[0]);
  });

  it('readNdlJson reads back what dumps writes, keys in order', () => {
    for (const s of TRICKY) expect(readNdlJson(dumpsString(s))).toEqual({ ok: true, value: s });
    const entries: Array<[string, string]> = [['10', 'a'], ['b', TRICKY[5]], ['1', TRICKY[11]]];
    expect(readNdlJson(dumpsEntries(entries))).toEqual({ ok: true, value: entries });
    expect(readNdlJson('null')).toEqual({ ok: true, value: null });
  });

  it('readNdlJson returns errors for bad or truncated text instead of throwing', () => {
    for (const bad of ['', '{', '{"a": "b"', '{"a": 1}', '{"a": "b",}', '"abc', '"\\x"', '{"a": "1", "a": "2"}', '[1]', 'nul', '"a" x', '"\\u12"']) {
      const r = readNdlJson(bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error).toMatch(/at (offset \d+|end of text)/);
    }
  });
});

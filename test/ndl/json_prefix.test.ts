import { isJsonPrefix, JsonPrefix, type JsonShape, type KeyRule } from '../../src/ndl/json_prefix';
import { dumpsEntries, dumpsValue, readNdlJson } from '../../src/ndl/pyjson';
import { Rng } from '../../src/util/rng';

/** What readNdlJson says of a whole text, for one shape: a valid field of that shape or not. */
function readerAccepts(shape: JsonShape, text: string): boolean {
  const r = readNdlJson(text);
  if (!r.ok) return false;
  if (shape === 'locals' && !Array.isArray(r.value)) return false;
  if (shape === 'value' && Array.isArray(r.value)) return false;
  // The parser's own rule for the elision marker (parse.ts): only as the first key.
  return !(Array.isArray(r.value) && r.value.slice(1).some(([k]) => k === '..'));
}

function complete(shape: JsonShape, text: string): boolean {
  const j = new JsonPrefix(shape);
  return j.push(Buffer.from(text, 'utf8')) && j.complete;
}

const LOCALS = [
  dumpsEntries([]),
  dumpsEntries([['s', "'berry'"], ['t', "'r'"]]),
  dumpsEntries([['..', '..'], ['n', '0']]),
  dumpsEntries([['q', 'say "hi" \\ back\nline'], ['é', '日本語 😀']]),
  '{ "a" : "1" ,"b":"2" }',
];
const VALUES = [dumpsValue(null), dumpsValue("'berry'"), dumpsValue('tab\t and \u0001 and é'), ' null ', '"\\u00e9\\/"'];

describe('NDL JSON read byte by byte', () => {
  it('every prefix of a valid field is a prefix, and only the whole field is complete', () => {
    for (const [shape, texts] of [['locals', LOCALS], ['value', VALUES]] as const) {
      for (const text of texts) {
        expect(readerAccepts(shape, text)).toBe(true);
        const bytes = Buffer.from(text, 'utf8');
        const j = new JsonPrefix(shape);
        bytes.forEach((b, i) => {
          expect(j.push(Uint8Array.of(b))).toBe(true);
          // Complete exactly once the value is whole (trailing whitespace may follow).
          expect(j.complete).toBe(readerAccepts(shape, bytes.subarray(0, i + 1).toString('utf8')));
        });
        expect(j.complete).toBe(true);
      }
    }
  });

  it('rejects, at the byte that breaks it, what the parser would not read', () => {
    const broken: Array<[JsonShape, string, string]> = [
      ['locals', '{"a": "1", "a"', 'a duplicate key'],
      ['locals', '{"n": "0", ".."', 'the elision marker after the first key'],
      ['locals', 'n', 'LOCALS that is null'],
      ['locals', ' "', 'LOCALS that is a string'],
      ['value', '{', 'a VALUE that is an object'],
      ['locals', '{"a": 1', 'a value that is not a string'],
      ['locals', '{"a": "x\n', 'a raw control character in a string'],
      ['value', '"\\x', 'a bad escape'],
      ['value', '"\\u00g', 'a bad \\u escape'],
      ['value', '"a" x', 'text after the value'],
      ['value', 'nul!', 'a misspelt null'],
      ['locals', '{"a": "1"}}', 'text after the object'],
    ];
    for (const [shape, text, why] of broken) {
      expect([why, isJsonPrefix(shape, text)]).toEqual([why, false]);
      // The text before its last byte was still a prefix: the break is found where it happens.
      expect([why, isJsonPrefix(shape, text.slice(0, -1))]).toEqual([why, true]);
    }
  });

  it('agrees with readNdlJson on 20,000 random texts: complete exactly when the parser reads them, never complete after a break', () => {
    const alphabet = ['{', '}', '"', ':', ',', ' ', '\\', 'a', 'b', '.', 'n', 'u', 'l', '\n'];
    const rng = Rng.from(7, 'json-prefix');
    let accepted = 0;
    for (let k = 0; k < 20000; k++) {
      const shape: JsonShape = rng.bool(0.5) ? 'locals' : 'value';
      let text: string;
      if (rng.bool(0.5)) {
        // A valid field (keys may repeat), then perhaps one byte changed.
        const keys = ['a', 'b', '..', 'n'];
        const entries = Array.from({ length: rng.range(0, 3) }, () => [rng.choice(keys), rng.choice(['', 'a', '"', '\\'])] as [string, string]);
        text = shape === 'locals' ? dumpsEntries(entries) : dumpsValue(rng.bool(0.3) ? null : rng.choice(['', 'ab', 'a"\\n']));
        if (rng.bool(0.5)) {
          const at = rng.int(text.length);
          text = text.slice(0, at) + rng.choice(alphabet) + text.slice(at + 1);
        }
      } else {
        text = shape === 'locals' ? '{"' : rng.bool(0.5) ? '"' : 'n';
        const n = rng.range(0, 12);
        for (let i = 0; i < n; i++) text += rng.choice(alphabet);
      }
      const reader = readerAccepts(shape, text);
      expect([shape, text, complete(shape, text)]).toEqual([shape, text, reader]);
      // A text with a valid completion is a prefix: try the closers a field can end with.
      for (const tail of ['', '"', '}', '"}', '": ""}', 'l', 'll']) if (readerAccepts(shape, text + tail)) expect([text, isJsonPrefix(shape, text)]).toEqual([text, true]);
      if (reader) accepted++;
    }
    expect(accepted).toBeGreaterThan(4000);
  });

  it('clones read on independently', () => {
    const j = new JsonPrefix('locals');
    j.push(Buffer.from('{"a": "1", '));
    const k = j.clone();
    expect(k.push(Buffer.from('"b": "2"}'))).toBe(true);
    expect(k.complete).toBe(true);
    expect(j.complete).toBe(false);
    // The clone's key did not leak into the original: "b" is still new there, "a" is not.
    expect(j.clone().push(Buffer.from('"b"'))).toBe(true);
    expect(j.clone().push(Buffer.from('"a"'))).toBe(false);
  });

  it('keeps keys to the names a KeyRule allows, or to its exact keys in order', () => {
    const names: KeyRule = { names: new Set(['n', 'total', '..']) };
    const exact: KeyRule = { names: new Set(['s', 't']), exact: ['s', 't'] };
    const none: KeyRule = { names: new Set(), exact: [] };
    const read = (rule: KeyRule, text: string) => {
      const j = new JsonPrefix('locals', rule);
      return j.push(Buffer.from(text)) ? (j.complete ? 'complete' : 'prefix') : 'invalid';
    };
    const cases: Array<[KeyRule, string, string]> = [
      [names, '{"..": "..", "total": "3", "n": "1"}', 'complete'],
      [names, '{"tot', 'prefix'],
      [names, '{"totals', 'invalid'],
      [names, '{"nn"', 'invalid'],
      [names, '{"n": "1", "m"', 'invalid'],
      // A used name is no way on: its prefix is refused where no unused name starts with it,
      // and once every name is used no further key may open.
      [names, '{"total": "1", "t', 'invalid'],
      [names, '{"..": "..", "total": "1", "n": "2", ', 'invalid'],
      [names, '{"..": "..", "total": "1", "n": "2"}', 'complete'],
      [exact, '{"s": "1", "t": "2"}', 'complete'],
      [exact, '{"t"', 'invalid'],
      [exact, '{"s": "1"}', 'invalid'],
      [exact, '{}', 'invalid'],
      [exact, '{"..": ".."', 'invalid'],
      [exact, '{"s": "1", "t": "2", ', 'invalid'],
      [none, '{"', 'invalid'],
      [none, '{}', 'complete'],
    ];
    for (const [rule, text, expected] of cases) expect([text, read(rule, text)]).toEqual([text, expected]);
    // Inside a limited key no token is safe unchecked; the bytes that may come next are known.
    const j = new JsonPrefix('locals', names);
    j.push(Buffer.from('{"t'));
    expect(j.inPlainString).toBe(false);
    expect([...j.nextKeyBytes!].map((b) => String.fromCharCode(b))).toEqual(['o']);
    j.push(Buffer.from('otal'));
    expect([...j.nextKeyBytes!].map((b) => String.fromCharCode(b))).toEqual(['"']);
    expect(new JsonPrefix('locals').nextKeyBytes).toBeUndefined();
    // A clone keeps the rule.
    const k = new JsonPrefix('locals', exact);
    k.push(Buffer.from('{"s": "1", '));
    expect(k.clone().push(Buffer.from('"s"'))).toBe(false);
    expect(k.clone().push(Buffer.from('"t": "2"}'))).toBe(true);
  });
});

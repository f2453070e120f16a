import * as fs from 'fs';
import * as path from 'path';
import { ESCAPE, NEWLINE, escapeForSpm, firstLoneSurrogate, unescapeFromSpm } from '../../src/tokenizer/escape';
import { chunkForTraining } from '../../src/tokenizer/evaluate';

const FIX = path.join(__dirname, '..', 'fixtures', 'tokenizer');

describe('escape layer', () => {
  const cases = [
    '',
    'plain',
    'a\nb\n\n',
    '\u2581 literal lower-one-eighth block \u2581\u2581',
    `${ESCAPE}${NEWLINE}\uE081${ESCAPE}${ESCAPE}\n${NEWLINE}`,
    '\r\n\t\u0000',
    fs.readFileSync(path.join(FIX, 'tricky.py'), 'utf8'),
  ];

  test.each(cases.map((c) => [JSON.stringify(c).slice(0, 40), c]))('round trip %s', (_label, text) => {
    expect(unescapeFromSpm(escapeForSpm(text))).toBe(text);
  });

  test('escaped text has no newline and no literal space mark', () => {
    const e = escapeForSpm('x\n\u2581y\n');
    expect(e).not.toContain('\n');
    expect(e).not.toContain('\u2581');
    expect(e).toBe(`x${NEWLINE}${ESCAPE}\uE081y${NEWLINE}`);
  });

  test('lone surrogates are found, pairs are not', () => {
    expect(firstLoneSurrogate('ok 😀')).toBe(-1);
    expect(firstLoneSurrogate('ab\uD800c')).toBe(2);
    expect(firstLoneSurrogate('\uDC00')).toBe(0);
    expect(firstLoneSurrogate('x\uD83D')).toBe(1);
  });
});

describe('chunkForTraining', () => {
  test('pieces concatenate back, respect the limit, and never split an NDL token', () => {
    const doc = escapeForSpm(
      'def f(x):\n    return x\n' + '<|frame_sep|><|line_sep|><|arg_sep|>{"x": "1"}<|src_sep|>    return x'.repeat(50),
    );
    const chunks = chunkForTraining(doc, 100);
    expect(chunks.join('')).toBe(doc);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(100);
      expect(c.includes('\n')).toBe(false);
      // Every `<|` in a chunk is closed in the same chunk.
      const opens = (c.match(/<\|/g) ?? []).length;
      const closes = (c.match(/\|>/g) ?? []).length;
      expect(opens).toBe(closes);
    }
  });

  test('a hard cut keeps escape pairs and surrogate pairs together', () => {
    const doc = escapeForSpm('\u2581😀'.repeat(40));
    const chunks = chunkForTraining(doc, 7);
    expect(chunks.join('')).toBe(doc);
    for (const c of chunks) {
      expect(c.endsWith(ESCAPE)).toBe(false);
      expect(firstLoneSurrogate(c)).toBe(-1);
    }
  });
});

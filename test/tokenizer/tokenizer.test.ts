import * as fs from 'fs';
import { DOCUMENT_TOKENS, SPECIAL_TOKENS } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';
import * as path from 'path';
import { SentencePieceProcessor } from 'sentencepiece-js';
import { checkDocuments } from '../../src/tokenizer/check';
import { escapeForSpm } from '../../src/tokenizer/escape';
import { EncodePool } from '../../src/tokenizer/encode-pool';
import { readManifest } from '../../src/tokenizer/manifest';
import { FIXTURES, fixtureCode, fixtureDocs, SHIPPED_MODEL } from './helpers';

let tok: Tokenizer;
beforeAll(async () => {
  tok = await Tokenizer.load(SHIPPED_MODEL);
});
afterAll(async () => {
  await tok.close();
});

const TRICKY = [
  '',
  ' ',
  '\n',
  '\r\n\r\n',
  '\t\tindented with tabs\n\t  mixed  \t\n',
  'trailing spaces   \nand tabs\t\t\n   ',
  'x = 12345678901234567890123456789 - 0.000001e-10',
  'emoji 😀👩‍💻🇫🇷 and CJK 日本語 and RTL العربية',
  '\u2581 literal ▁ marks \uE000 \uE00A \uE081 private use',
  'NUL \u0000 and DEL \u007f and BOM \ufeff and replacement \ufffd',
  '"\\n" is not a newline, "\\\\" is a backslash',
  '<|not_a_token|> <|frame_sep <|<|pad|>|> |>',
];

describe('the shipped tokenizer', () => {
  test('matches its manifest', () => {
    const m = readManifest(SHIPPED_MODEL.replace(/\.model$/, '.manifest.json'));
    expect(m.sha256).toBe(tok.sha256);
    expect(m.vocabSize).toBe(tok.vocabSize);
    expect(m.specialTokens).toEqual(tok.specialTokenIds());
    expect([m.bosId, m.eosId, m.padId]).toEqual([tok.bosId, tok.eosId, tok.padId]);
    expect(tok.vocabSize).toBeGreaterThanOrEqual(8000);
  });

  test('BOS/EOS/PAD are the NDL document tokens', () => {
    expect(tok.bosId).toBe(tok.idOf(DOCUMENT_TOKENS.begin));
    expect(tok.eosId).toBe(tok.idOf(DOCUMENT_TOKENS.end));
    expect(tok.padId).toBe(tok.idOf(DOCUMENT_TOKENS.pad));
    expect(new Set([tok.bosId, tok.eosId, tok.padId, tok.unkId]).size).toBe(4);
  });

  test.each(SPECIAL_TOKENS.map((t) => [t]))('%s is one id, alone and glued to text', (t) => {
    const id = tok.idOf(t);
    expect(tok.encode(t)).toEqual([id]);
    for (const [before, after] of [
      ['x', 'y'],
      ['def f(x):', '    return x'],
      ['{"a": "1"}', '<|frame_sep|>'],
      ['  \n', '\n\t'],
      ['123', '456'],
      ['<|', '|>'],
      ['😀', 'é'],
    ]) {
      const text = before + t + after;
      const ids = tok.encode(text);
      expect(ids.filter((i) => i === id)).toHaveLength(t === '<|frame_sep|>' && after === '<|frame_sep|>' ? 2 : 1);
      expect(tok.decode(ids)).toBe(text);
      // The token's id sits between the ids of the text before it and after it.
      const at = ids.indexOf(id);
      expect(tok.decode(ids.slice(0, at))).toBe(before);
      if (!(t === '<|frame_sep|>' && after === '<|frame_sep|>')) expect(tok.decode(ids.slice(at + 1))).toBe(after);
    }
  });

  test('text that only looks like a special token gets no special id', () => {
    const specialIds = new Set(SPECIAL_TOKENS.map((t) => tok.idOf(t)));
    const ids = tok.encode('<|frame_sepp|> <|Frame_sep|> < |pad|> <|pad |>');
    expect(ids.some((i) => specialIds.has(i))).toBe(false);
  });

  test.each(TRICKY.map((t) => [JSON.stringify(t).slice(0, 50), t]))('exact round trip: %s', (_l, text) => {
    expect(tok.decode(tok.encode(text))).toBe(text);
  });

  test('exact round trip on every fixture NDL document and code file', () => {
    const docs = [...fixtureDocs(), ...fixtureCode()];
    expect(docs.length).toBeGreaterThan(40);
    for (const d of docs) expect(tok.decode(tok.encode(d))).toBe(d);
  });

  test('the fast id copy out of wasm equals sentencepiece-js encodeIds', async () => {
    const spp = new SentencePieceProcessor();
    await spp.load(SHIPPED_MODEL);
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const { makeIdsEncoder } = require('../../src/tokenizer/spm-encode.js');
    const fast = makeIdsEncoder(spp);
    expect(fast.name).toBe('fast'); // the layout self-check passed; 'slow' would halve throughput
    for (const t of [...fixtureDocs(), ...fixtureCode(), ...TRICKY]) {
      expect(Array.from(fast(escapeForSpm(t)))).toEqual(spp.encodeIds(escapeForSpm(t)));
    }
  });

  test('digits are split one per piece', () => {
    const ids = tok.encode('9876543210');
    expect(ids).toHaveLength(10);
    expect(ids.map((i) => tok.pieceOf(i)).join('')).toBe('9876543210');
  });

  test('the NDL documents compress (NDL tokens and JSON syntax are not spelled out)', () => {
    const docs = fixtureDocs();
    const bytes = docs.reduce((a, d) => a + Buffer.byteLength(d), 0);
    const tokens = docs.reduce((a, d) => a + tok.encode(d).length, 0);
    expect(bytes / tokens).toBeGreaterThan(3);
  });

  test('a lone surrogate is refused; out-of-range ids are refused', () => {
    expect(() => tok.encode('ab\uD800')).toThrow(/lone surrogate at index 2/);
    expect(() => tok.decode([tok.vocabSize])).toThrow(RangeError);
    expect(() => tok.decode([-1])).toThrow(RangeError);
  });

  test('batch encode on worker threads equals single-thread encode, in order', async () => {
    const texts = [...fixtureDocs(), ...fixtureCode(), ...TRICKY];
    // Many small texts too, so that jobs hold several texts each and finish out of order.
    for (let i = 0; i < 300; i++) texts.push(`line ${i}\n${'    '.repeat(i % 5)}x_${i} = ${i * 7919}\n`);
    const expected = texts.map((t) => tok.encode(t));
    const batched = await tok.encodeBatch(texts, { workers: 2 });
    expect(batched).toHaveLength(texts.length);
    batched.forEach((ids, i) => expect(Array.from(ids)).toEqual(expected[i]));
    // Reusing the pool, and the in-thread path, give the same.
    const again = await tok.encodeBatch(texts.slice(0, 10), { workers: 2 });
    again.forEach((ids, i) => expect(Array.from(ids)).toEqual(expected[i]));
    const inThread = await tok.encodeBatch(texts.slice(0, 10), { workers: 0 });
    inThread.forEach((ids, i) => expect(Array.from(ids)).toEqual(expected[i]));
  });

  test('`ndbg tokenizer check` counts round trips and single-id special tokens over a JSONL file', async () => {
    const r = await checkDocuments(tok, path.join(FIXTURES, 'ndl-docs.jsonl'), 'text', 2);
    expect(r.docs).toBe(fixtureDocs().length);
    expect(r.exactRoundTrips).toBe(r.docs);
    expect(r.specialTokenMismatches).toBe(0);
    expect(r.failures).toEqual([]);
    expect(r.bytesPerToken).toBeGreaterThan(3);
  });

  test('a worker that cannot load its model fails the batch instead of hanging', async () => {
    const pool = new EncodePool('/nonexistent/ndbg.model', 1);
    await expect(pool.encode(['x', 'y'])).rejects.toThrow(/tokenizer worker: .*ENOENT/);
    await pool.close();
    await expect(pool.encode(['x'])).rejects.toThrow(/after close/);
  });

  test('the model file is the one the manifest hashes', () => {
    expect(fs.existsSync(SHIPPED_MODEL)).toBe(true);
  });
});

import * as path from 'path';
import { Tokenizer } from '../../src/tokenizer';
import { PieceType } from '../../src/tokenizer/model-proto';
import { PieceDropout } from '../../src/tokenizer/piece_dropout';
import { Rng } from '../../src/util/rng';

const QUICKSTART_MODEL = path.join(__dirname, '..', '..', 'tokenizer', 'ndbg-2k.model');

const DOCUMENT =
  '<|begin_of_text|><|trace_context_start|>def count(s, t):\n    n = 0\n    for c in s:\n        n += int(c == t)\n    return n\n\n' +
  'def main():\n    return count("berry", "r")\n<|frame_sep|><|call_sep|><|src_sep|>def count(s, t):<|arg_sep|>{"s": "\'berry\'", "t": "\'r\'"}' +
  '<|action_sep|><|step_into|><|frame_sep|><|line_sep|><|arg_sep|>{"..": "..", "n": "0"}<|src_sep|>    n = 0<|action_sep|><|continue|><|frame_sep|><|exit_normal|><|trace_end|><|end_of_text|>';

describe('piece dropout', () => {
  let tok: Tokenizer;
  beforeAll(async () => {
    tok = await Tokenizer.load(QUICKSTART_MODEL);
  });

  it('writes the same text in more, smaller pieces, splitting only word pieces', () => {
    const ids = tok.encodeIds(DOCUMENT);
    const out = new PieceDropout(tok.modelPieces, 1).apply(ids, Rng.from(0, 'doc'), 10_000);
    expect(tok.decode(out)).toBe(DOCUMENT);
    expect(out.length).toBeGreaterThan(ids.length);
    // At probability 1 every word piece is split; every other piece is kept as it was.
    const kept = new Set(out);
    const isWord = (id: number) => tok.modelPieces[id].type === PieceType.NORMAL && /^\u2581?[\p{L}\p{N}]{2,}$/u.test(tok.modelPieces[id].piece);
    for (const id of ids) if (!isWord(id)) expect(kept.has(id)).toBe(true);
    expect(out.length - ids.length).toBeGreaterThanOrEqual(Array.from(ids).filter(isWord).length);
    for (const special of ['<|frame_sep|>', '<|call_sep|>', '<|step_into|>', '<|begin_of_text|>']) expect(kept.has(tok.idOf(special))).toBe(true);
  });

  it('spells a word piece out: some split of `err` starts with `e`', () => {
    const dropout = new PieceDropout(tok.modelPieces, 1);
    const err = tok.encodeIds("'berry'");
    const spelled = new Set<string>();
    for (let seed = 0; seed < 40; seed++) spelled.add(Array.from(dropout.apply(err, Rng.from(seed, 'w'), 100), (id) => tok.modelPieces[id].piece).join('|'));
    expect([...spelled].some((s) => s.includes('|e|') || s.includes('|e'))).toBe(true);
    for (const s of spelled) expect(s.replace(/\|/g, '')).toBe(Array.from(err, (id) => tok.modelPieces[id].piece).join(''));
  });

  it('is a function of the seed, changes nothing at probability 0, and never passes the token limit', () => {
    const ids = tok.encodeIds(DOCUMENT);
    const dropout = new PieceDropout(tok.modelPieces, 0.5);
    expect(dropout.apply(ids, Rng.from(7, 'd'), 10_000)).toEqual(dropout.apply(ids, Rng.from(7, 'd'), 10_000));
    expect(dropout.apply(ids, Rng.from(7, 'd'), 10_000)).not.toEqual(dropout.apply(ids, Rng.from(8, 'd'), 10_000));
    expect(Array.from(new PieceDropout(tok.modelPieces, 0).apply(ids, Rng.from(7, 'd'), 10_000))).toEqual(Array.from(ids));
    for (const extra of [0, 1, 5]) {
      const out = new PieceDropout(tok.modelPieces, 1).apply(ids, Rng.from(1, 'd'), ids.length + extra);
      expect(out.length).toBeLessThanOrEqual(ids.length + extra);
      expect(tok.decode(out)).toBe(DOCUMENT);
    }
  });

  it('segments text with characters no piece covers (outside the BMP too) as their bytes', () => {
    const dropout = new PieceDropout(tok.modelPieces, 1);
    for (const text of ['ab\u{1F600}cd', '\u{1D465}x', 'x\u{1D465}']) {
      const ids = dropout.segment(text);
      expect(tok.decode(ids)).toBe(text);
      expect(ids.some((id) => tok.modelPieces[id].type === PieceType.BYTE)).toBe(true);
    }
  });

  it('rejects a probability outside [0, 1]', () => {
    expect(() => new PieceDropout(tok.modelPieces, 1.5)).toThrow(/\[0, 1\]/);
  });
});

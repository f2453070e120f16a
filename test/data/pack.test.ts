import { ByteTokenizer } from '../../src/tokenizer';
import { frameDocument, RowPacker, specialIds } from '../../src/data/pack';

const tok = new ByteTokenizer();
const ids = specialIds(tok);

describe('ByteTokenizer', () => {
  it('round-trips text and keeps each NDL special token one id', () => {
    const text = '<|begin_of_text|><|trace_context_start|>x = "é∑😀" <|not_special|><|frame_sep|>tail<|end_of_text|>';
    const enc = tok.encode(text);
    expect(tok.decode(enc)).toBe(text);
    expect(enc[0]).toBe(tok.bosId);
    expect(enc[1]).toBe(tok.idOf('<|trace_context_start|>'));
    expect(enc[enc.length - 1]).toBe(tok.eosId);
    expect(Array.from(enc).filter((i) => i === tok.idOf('<|frame_sep|>'))).toHaveLength(1);
    expect(tok.vocabSize).toBeLessThanOrEqual(65536);
  });
});

describe('frameDocument', () => {
  it('adds BOS/EOS to plain text but does not double them on NDL documents', () => {
    const plain = frameDocument(tok.encode('ab'), ids, { maskContext: false });
    expect(Array.from(plain.ids)).toEqual([tok.bosId, ...tok.encode('ab'), tok.eosId]);
    const ndl = frameDocument(tok.encode('<|begin_of_text|>ab<|end_of_text|>'), ids, { maskContext: false });
    expect(Array.from(ndl.ids)).toEqual(Array.from(plain.ids));
    // BOS is never a target: predicting it would cross a document boundary.
    expect(Array.from(plain.mask)).toEqual([0, 1, 1, 1]);
  });

  it('masks the NDL code context only when asked', () => {
    const text = '<|begin_of_text|><|trace_context_start|>def f(): pass<|frame_sep|><|call_sep|>X<|trace_end|><|end_of_text|>';
    const enc = tok.encode(text);
    const on = frameDocument(enc, ids, { maskContext: true });
    const off = frameDocument(enc, ids, { maskContext: false });
    const start = Array.from(on.ids).indexOf(tok.idOf('<|trace_context_start|>')!);
    const sep = Array.from(on.ids).indexOf(tok.idOf('<|frame_sep|>')!);
    expect(Array.from(on.mask.subarray(start, sep)).every((m) => m === 0)).toBe(true);
    expect(Array.from(on.mask.subarray(sep)).every((m) => m === 1)).toBe(true);
    expect(Array.from(off.mask.subarray(1)).every((m) => m === 1)).toBe(true);
    expect(sep - start).toBe(1 + Buffer.byteLength('def f(): pass'));
  });
});

describe('RowPacker', () => {
  it('cuts the stream into rows that overlap by one token and pads only the last', () => {
    const rows: Array<{ t: number[]; m: number[]; d: number[] }> = [];
    const packer = new RowPacker(5, tok.padId, (t, m, d) => rows.push({ t: Array.from(t), m: Array.from(m), d: Array.from(d) }));
    const docs = ['abcdef', 'gh', 'ijklmnopq'].map((s) => frameDocument(tok.encode(s), ids, { maskContext: false }));
    docs.forEach((d, i) => packer.push(d, i));
    packer.finish();
    const stream = docs.flatMap((d) => Array.from(d.ids));
    const docOf = docs.flatMap((d, i) => Array.from(d.ids, () => i));
    // Row r is stream[4r .. 4r+4]; the last is padded.
    expect(rows).toHaveLength(Math.ceil((stream.length - 1) / 4));
    rows.forEach((row, r) => {
      for (let i = 0; i < 5; i++) {
        const at = 4 * r + i;
        if (at < stream.length) {
          expect(row.t[i]).toBe(stream[at]);
          expect(row.d[i]).toBe(docOf[at]);
        } else {
          expect([row.t[i], row.m[i], row.d[i]]).toEqual([tok.padId, 0, -1]);
        }
      }
    });
  });

  it('does not emit a row holding only the shared token', () => {
    const rows: number[][] = [];
    const packer = new RowPacker(5, tok.padId, (t) => rows.push(Array.from(t)));
    packer.push(frameDocument(tok.encode('abcdefg'), ids, { maskContext: false }), 0); // 9 tokens = exactly 2 rows
    packer.finish();
    expect(rows).toHaveLength(2);
  });
});

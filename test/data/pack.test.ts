import { ByteTokenizer } from '../../src/tokenizer';
import { frameDocument, RowPacker, specialIds, WholeDocumentPacker } from '../../src/data/pack';

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

describe('WholeDocumentPacker', () => {
  const doc = (len: number, fill: number) => ({ ids: Uint32Array.from({ length: len }, (_, i) => (i === 0 ? tok.bosId : fill)), mask: Uint8Array.from({ length: len }, (_, i) => (i === 0 ? 0 : 1)) });
  function pack(lengths: number[], rowLen: number, windowDocs?: number) {
    const rows: Array<{ tokens: number[]; mask: number[]; docIds: number[] }> = [];
    const p = new WholeDocumentPacker(rowLen, tok.padId, (t, m, d) => rows.push({ tokens: Array.from(t), mask: Array.from(m), docIds: Array.from(d) }), windowDocs);
    lengths.forEach((n, i) => p.push(doc(n, 100 + i), i));
    p.finish();
    return { rows, stats: p.stats };
  }

  it('never cuts a document: each appears whole in exactly one row, with its own doc id', () => {
    const lengths = [5, 9, 3, 12, 7, 2, 8, 4, 6, 10, 1, 11];
    const { rows, stats } = pack(lengths, 13);
    expect(stats.documentsSplit).toBe(0);
    lengths.forEach((n, i) => {
      const holders = rows.filter((r) => r.docIds.includes(i));
      expect(holders).toHaveLength(1);
      const r = holders[0];
      const at = r.docIds.indexOf(i);
      expect(r.docIds.lastIndexOf(i) - at + 1).toBe(n); // contiguous and complete
      expect(r.tokens.slice(at, at + n)).toEqual(Array.from(doc(n, 100 + i).ids));
    });
    // Padding is -1 / pad / mask 0 and comes after the documents of a row.
    for (const r of rows) {
      const first = r.docIds.indexOf(-1);
      if (first < 0) continue;
      expect(r.docIds.slice(first).every((d) => d === -1)).toBe(true);
      expect(r.tokens.slice(first).every((t) => t === tok.padId)).toBe(true);
      expect(r.mask.slice(first).every((m) => m === 0)).toBe(true);
    }
  });

  it('packs best-fit decreasing: no more rows than needed here, padding counted', () => {
    // 78 tokens in rows of 13: six rows hold them exactly when packed well; first-come packing needs more.
    const lengths = [5, 9, 3, 12, 7, 2, 8, 4, 6, 10, 1, 11];
    const { rows, stats } = pack(lengths, 13);
    expect(rows).toHaveLength(6);
    const padding = rows.reduce((a, r) => a + r.docIds.filter((d) => d < 0).length, 0);
    expect(stats.paddingTokens).toBe(padding);
    expect(stats.targetTokens).toBe(rows.length * 12);
  });

  it('drops and counts a document longer than a row instead of cutting it', () => {
    const { rows, stats } = pack([4, 20, 6], 13);
    expect(stats).toMatchObject({ documentsDropped: 1, tokensDropped: 20, documentsSplit: 0 });
    expect(rows.flatMap((r) => r.docIds).filter((d) => d === 1)).toHaveLength(0);
  });

  it('is a pure function of the input order, window by window, rows in order of their first document', () => {
    const lengths = Array.from({ length: 40 }, (_, i) => 1 + ((i * 7) % 12));
    const a = pack(lengths, 13, 10);
    const b = pack(lengths, 13, 10);
    expect(a).toEqual(b);
    const firsts = a.rows.map((r) => Math.min(...r.docIds.filter((d) => d >= 0)));
    // Windows of 10 documents are packed separately, so a row never mixes documents of two windows.
    for (const r of a.rows) {
      const ds = r.docIds.filter((d) => d >= 0);
      expect(new Set(ds.map((d) => Math.floor(d / 10))).size).toBe(1);
    }
    for (let w = 0; w < 4; w++) {
      const mine = firsts.filter((f) => Math.floor(f / 10) === w);
      expect(mine).toEqual([...mine].sort((x, y) => x - y));
    }
  });
});

describe('RowPacker stats', () => {
  it('counts the documents a stream cuts across rows', () => {
    const p = new RowPacker(5, tok.padId, () => undefined);
    p.push({ ids: Uint32Array.from([1, 2, 3]), mask: new Uint8Array(3).fill(1) }, 0); // fits the first row
    p.push({ ids: Uint32Array.from([4, 5, 6]), mask: new Uint8Array(3).fill(1) }, 1); // crosses into the second
    p.finish();
    expect(p.stats.documentsSplit).toBe(1);
  });
});

import * as fs from 'fs';
import * as path from 'path';
import pl from 'nodejs-polars';
import { Tokenizer } from '../../src/tokenizer';
import type { Manifest } from '../../src/data/manifest';
import { buildFrom, tmpDir } from './helpers';

/**
 * `ndbg data build --piece-dropout P` on real NDL documents with the quickstart's tokenizer:
 * training documents are written in more, smaller pieces that decode to the same text; the
 * validation split keeps the canonical pieces; the same seed gives the same bytes.
 */
const QUICKSTART_MODEL = path.join(__dirname, '..', '..', 'tokenizer', 'ndbg-2k.model');
const NDL_DOCS = path.join(__dirname, '..', 'fixtures', 'tokenizer', 'ndl-docs.jsonl');

describe('data build with piece dropout', () => {
  const dir = tmpDir('piece-dropout');
  const input = path.join(dir, 'ndl.jsonl');
  let tok: Tokenizer;
  beforeAll(async () => {
    tok = await Tokenizer.load(QUICKSTART_MODEL);
    fs.writeFileSync(input, fs.readFileSync(NDL_DOCS, 'utf8'));
  });

  const build = (name: string, pieceDropout?: number) =>
    buildFrom(path.join(dir, name), [`ndl=${input}:ndl`], { tokenizer: QUICKSTART_MODEL, seqLen: 1024, shardMb: 1, valFraction: 0.3, pieceDropout });

  /** Each split's documents as [decoded text, token count], sorted (whole-document packing reorders them by length). */
  function documents(out: string, m: Manifest, split: 'train' | 'val'): Array<[string, number]> {
    const docs: Array<[string, number]> = [];
    for (const sh of m.sources[0][split].shards) {
      const df = pl.readIPC(fs.readFileSync(path.join(out, sh.file)));
      const tokens = df.getColumn('tokens').toArray() as unknown as number[][];
      const ids = df.getColumn('doc_ids').toArray() as unknown as number[][];
      tokens.forEach((row, r) => {
        for (const d of new Set(ids[r].filter((x) => x >= 0))) {
          const own = row.filter((_, i) => ids[r][i] === d);
          docs.push([tok.decode(own), own.length]);
        }
      });
    }
    return docs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  }

  it('splits training documents into more pieces of the same text, leaves validation alone, and records it', async () => {
    const plain = await build('plain');
    const dropped = await build('dropped', 0.5);
    const again = await build('again', 0.5);
    const train = [documents(path.join(dir, 'plain'), plain, 'train'), documents(path.join(dir, 'dropped'), dropped, 'train')];
    expect(train[0].length).toBeGreaterThan(10);
    expect(train[1].map(([text]) => text)).toEqual(train[0].map(([text]) => text));
    expect(train[1].filter(([, n], i) => n > train[0][i][1]).length).toBeGreaterThan(train[0].length / 2);
    expect(train[1].every(([, n], i) => n >= train[0][i][1])).toBe(true);
    expect(documents(path.join(dir, 'dropped'), dropped, 'val')).toEqual(documents(path.join(dir, 'plain'), plain, 'val'));
    expect(dropped.packing.pieceDropout).toBe(0.5);
    expect(plain.packing.pieceDropout).toBeUndefined();
    for (const [i, sh] of dropped.sources[0].train.shards.entries()) {
      expect(fs.readFileSync(path.join(dir, 'again', again.sources[0].train.shards[i].file)).equals(fs.readFileSync(path.join(dir, 'dropped', sh.file)))).toBe(true);
    }
  });

  it('refuses a probability outside [0, 1] and the byte tokenizer, before writing anything', async () => {
    await expect(build('bad', 1.5)).rejects.toThrow(/--piece-dropout must be in \[0, 1\], got 1.5/);
    await expect(buildFrom(path.join(dir, 'bytes'), [`ndl=${input}:ndl`], { seqLen: 4096, pieceDropout: 0.2 })).rejects.toThrow(/needs a sentencepiece tokenizer/);
    expect(fs.existsSync(path.join(dir, 'bad'))).toBe(false);
  });
});

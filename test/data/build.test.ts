import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import pl from 'nodejs-polars';
import { ByteTokenizer } from '../../src/tokenizer';
import { isValidationDocument } from '../../src/data/build';
import { inspectDataset } from '../../src/data/inspect';
import { readManifest } from '../../src/data/manifest';
import { readShard } from '../../src/data/shard';
import { parseSourceSpec } from '../../src/data/sources';
import { buildFrom, FIXTURES, tmpDir, writeSyntheticJsonl } from './helpers';

const tok = new ByteTokenizer();
const fixtureSources = [
  `traces=${path.join(FIXTURES, 'ndl.jsonl')}:ndl`,
  `code=${path.join(FIXTURES, 'code')}`,
  `web=${path.join(FIXTURES, 'web.jsonl')}:text`,
];

function filesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else out[r] = createHash('sha256').update(fs.readFileSync(path.join(dir, r))).digest('hex');
    }
  };
  walk('');
  return out;
}

/** The packed stream of one source/split, rebuilt from its rows (row r holds stream[rT..rT+T]). */
function streamOf(dir: string, source: string, split: 'train' | 'val'): number[] {
  const m = readManifest(dir);
  const s = m.sources.find((x) => x.name === source)!;
  const out: number[] = [];
  for (const sh of s[split].shards) {
    const df = pl.readIPC(fs.readFileSync(path.join(dir, sh.file)));
    const rows = df.getColumn('tokens').toArray() as number[][];
    const docs = df.getColumn('doc_ids').toArray() as number[][];
    rows.forEach((row, r) => row.forEach((t, i) => {
      if ((out.length === 0 || i > 0) && docs[r][i] >= 0) out.push(t);
    }));
  }
  return out;
}

describe('data build', () => {
  const dir = tmpDir('build');
  const out = path.join(dir, 'fixtures');
  let manifest: Awaited<ReturnType<typeof buildFrom>>;

  beforeAll(async () => {
    // Every kind as a stream here (NDL documents are packed whole by default; see below).
    manifest = await buildFrom(out, fixtureSources, { seqLen: 16, valFraction: 0, wholeDocumentKinds: [] });
  });

  it('writes a manifest that describes each source and shard truthfully', () => {
    expect(manifest).toEqual(readManifest(out));
    expect(manifest.tokenDtype).toBe('uint16');
    expect(manifest.tokenizer.sha256).toBe(tok.sha256);
    expect(manifest.tokenizer.vocabSize).toBe(tok.vocabSize);
    expect(manifest.rowLen).toBe(17);
    const [traces, code, web] = manifest.sources;
    expect([traces.kind, code.kind, web.kind]).toEqual(['ndl', 'code', 'text']);
    expect([traces.train.documents, code.train.documents, web.train.documents]).toEqual([2, 2, 2]); // notes.txt is not .py
    expect(traces.python).toBe('3.11.2');
    expect(traces.generator).toEqual({ policy: 'all_step_into', seed: 0 });
    expect(traces.sidecar?.file).toBe(path.join(FIXTURES, 'ndl.manifest.json'));
    for (const s of manifest.sources) {
      for (const sh of s.train.shards) {
        const bytes = fs.readFileSync(path.join(out, sh.file));
        expect(bytes.length).toBe(sh.bytes);
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(sh.sha256);
      }
    }
  });

  it('packs documents back to back, framed once by BOS/EOS, losslessly', () => {
    const ndl = fs.readFileSync(path.join(FIXTURES, 'ndl.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).text as string);
    const want = ndl.flatMap((t) => Array.from(tok.encode(t))); // NDL docs carry their own BOS/EOS
    const got = streamOf(out, 'traces', 'train');
    expect(got).toEqual(want);
    expect(manifest.sources[0].train.tokens).toBe(want.length - 1);
    const code = streamOf(out, 'code', 'train');
    const files = ['count.py', 'pkg/util.py'].map((f) => fs.readFileSync(path.join(FIXTURES, 'code', f), 'utf8'));
    expect(code).toEqual(files.flatMap((t) => [tok.bosId, ...tok.encode(t), tok.eosId]));
    expect(tok.decode(streamOf(out, 'web', 'train'))).toContain('Naïve café — unicode survives: ∑ 😀');
  });

  it('opens with a second Arrow implementation (polars) with the manifest columns and row counts', () => {
    for (const s of manifest.sources) {
      for (const sh of s.train.shards) {
        const df = pl.readIPC(fs.readFileSync(path.join(out, sh.file)));
        expect(df.columns).toEqual(['tokens', 'loss_mask', 'doc_ids']);
        expect(df.height).toBe(sh.rows);
        expect(df.dtypes.map(String)).toEqual([
          'DataType(FixedSizeList(DataType(UInt16),17))',
          'DataType(FixedSizeList(DataType(UInt8),17))',
          'DataType(FixedSizeList(DataType(Int32),17))',
        ]);
      }
    }
  });

  it('gives the same bytes whatever the number of workers', async () => {
    const other = path.join(dir, 'workers2');
    await buildFrom(other, fixtureSources, { seqLen: 16, valFraction: 0, workers: 2, wholeDocumentKinds: [] });
    expect(filesUnder(other)).toEqual(filesUnder(out));
  });

  it('masks NDL code contexts when asked, and nothing else', async () => {
    const masked = path.join(dir, 'masked');
    const m = await buildFrom(masked, [fixtureSources[0]], { seqLen: 16, valFraction: 0, maskContext: true, wholeDocumentKinds: [] });
    expect(m.packing.maskContext).toBe(true);
    const sh = m.sources[0].train.shards[0];
    const data = readShard({
      file: path.join(masked, sh.file), manifestFile: 'm', bytes: sh.bytes, sha256: sh.sha256, rows: sh.rows, verifySha256: true,
      identity: { tokenizerSha256: tok.sha256, seqLen: 16, tokenDtype: 'uint16', source: 'traces', split: 'train', index: 0 },
    });
    // Reassemble (token, mask) pairs of the stream and check which tokens are excluded.
    const text: string[] = [];
    const kept: string[] = [];
    for (let r = 0; r < data.rows; r++) {
      for (let i = r === 0 ? 0 : 1; i < 17; i++) {
        const at = r * 17 + i;
        if (data.docIds[at] < 0) continue;
        const piece = tok.decode([data.tokens[at]]);
        text.push(piece);
        if (data.mask[at]) kept.push(piece);
      }
    }
    const keptText = kept.join('');
    expect(text.join('')).toContain('def count(s, t):');
    expect(keptText).not.toContain('def count(s, t):\n    n = 0'); // the context is excluded ...
    expect(keptText).toContain('<|frame_sep|><|call_sep|><|src_sep|>def main():'); // ... the trace is not
  });

  it('splits by document key, deterministically, into disjoint train and validation streams', async () => {
    const inputs = path.join(dir, 'split.jsonl');
    writeSyntheticJsonl(inputs, 9, 200, 20, 60);
    const m = await buildFrom(path.join(dir, 'split'), [`s=${inputs}:text`], { valFraction: 0.2, splitSeed: 5 });
    const docs = fs.readFileSync(inputs, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; text: string });
    const val = docs.filter((d) => isValidationDocument(d.id, 0.2, 5));
    expect(val.length).toBeGreaterThan(20);
    expect(val.length).toBeLessThan(60);
    expect(m.sources[0].val.documents).toBe(val.length);
    expect(m.sources[0].train.documents).toBe(docs.length - val.length);
    const want = val.flatMap((d) => [tok.bosId, ...tok.encode(d.text), tok.eosId]);
    expect(streamOf(path.join(dir, 'split'), 's', 'val')).toEqual(want);
  });

  it('bounds shard size and refuses to overwrite a data set without --force', async () => {
    const inputs = path.join(dir, 'big.jsonl');
    writeSyntheticJsonl(inputs, 3, 300, 100, 200);
    const target = path.join(dir, 'big');
    const m = await buildFrom(target, [`s=${inputs}:text`], { shardMb: 0.01, valFraction: 0 });
    expect(m.sources[0].train.shards.length).toBeGreaterThan(3);
    for (const sh of m.sources[0].train.shards) expect(sh.bytes).toBeLessThan(0.01 * 2 ** 20 + 4096); // + Arrow framing
    await expect(buildFrom(target, [`s=${inputs}:text`])).rejects.toThrow(/already holds a data set.*--force/);
    await buildFrom(target, [`s=${inputs}:text`], { force: true, seqLen: 64, valFraction: 0 });
    expect(readManifest(target).seqLen).toBe(64);
    expect(fs.readdirSync(path.join(target, 'train')).length).toBe(readManifest(target).sources[0].train.shards.length);
  });

  it('packs NDL documents whole by default: none split, long ones dropped and counted, padding reported', async () => {
    // Synthetic NDL documents of 20..200 bytes (byte tokenizer: ~1 token per byte) in rows of 129.
    const inputs = path.join(dir, 'ndl-synthetic.jsonl');
    const rng = Array.from({ length: 300 }, (_, i) => 20 + ((i * 37) % 181));
    fs.writeFileSync(inputs, rng.map((n, i) => JSON.stringify({ id: `p${i}`, text: `<|begin_of_text|>${'x'.repeat(n)}<|end_of_text|>` })).join('\n') + '\n');
    const target = path.join(dir, 'whole');
    const m = await buildFrom(target, [`ndl=${inputs}:ndl`, `code=${path.join(FIXTURES, 'code')}`], { seqLen: 128, valFraction: 0.1 });
    const [ndl, code] = m.sources;
    const tooLong = rng.filter((n) => n + 2 > 129).length;
    expect(tooLong).toBeGreaterThan(0);
    expect(ndl.packing).toMatchObject({ mode: 'whole_documents', documentsSplit: 0, documentsDropped: tooLong, tokensDropped: rng.filter((n) => n + 2 > 129).reduce((a, n) => a + n + 2, 0) });
    expect(code.packing?.mode).toBe('stream');
    // Read every row back: each document id occupies one contiguous run in one row.
    let pad = 0;
    let targets = 0;
    const seen = new Map<string, number>();
    for (const split of ['train', 'val'] as const) {
      for (const sh of ndl[split].shards) {
        const df = pl.readIPC(fs.readFileSync(path.join(target, sh.file)));
        const docs = df.getColumn('doc_ids').toArray() as number[][];
        docs.forEach((row, r) => {
          const ids = row.filter((d) => d >= 0);
          for (const d of new Set(ids)) {
            const key = `${split}:${d}`;
            expect(seen.has(key)).toBe(false); // never in two rows
            seen.set(key, r);
            expect(row.lastIndexOf(d) - row.indexOf(d) + 1).toBe(ids.filter((x) => x === d).length); // contiguous
          }
          expect(row[0]).toBeGreaterThanOrEqual(0); // a row starts with a document
          pad += row.slice(1).filter((d) => d < 0).length;
          targets += row.length - 1;
        });
      }
    }
    expect(seen.size).toBe(rng.length - tooLong);
    expect(ndl.packing?.paddingFraction).toBeCloseTo(pad / targets, 5);
    expect(ndl.packing!.paddingFraction).toBeLessThan(0.1); // best-fit decreasing packs small documents tightly
  });

  it('reports bad input with the file and line', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(bad, '{"text": "ok"}\n{"text": 5}\n');
    await expect(buildFrom(path.join(dir, 'bad'), [`s=${bad}:text`])).rejects.toThrow(`${bad}:2: field "text" must be a string`);
    fs.writeFileSync(bad, '{"text": "ok"}\n{oops\n');
    await expect(buildFrom(path.join(dir, 'bad2'), [`s=${bad}:text`])).rejects.toThrow(`${bad}:2: invalid JSON`);
    expect(() => parseSourceSpec(`x=${bad}:video`)).toThrow(/unknown kind "video"/);
    expect(() => parseSourceSpec('nopath')).toThrow(/NAME=PATH/);
  });

  it('inspect prints the summary and a decoded row', async () => {
    let text = '';
    await inspectDataset({ dir: out, split: 'train', source: 'traces', row: 0, verify: true, maxChars: 1000 }, (s) => (text += s));
    expect(text).toContain('source traces (ndl)');
    expect(text).toContain('python 3.11.2');
    expect(text).toMatch(/verified \d+ train shards/);
    expect(text).toContain('<|begin_of_text|><|trace_context_start|>def count(s, t)'); // 17 tokens: a row's worth
  });
});

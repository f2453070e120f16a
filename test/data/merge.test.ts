import * as fs from 'fs';
import * as path from 'path';
import { MixtureLoader } from '../../src/data/loader';
import { readManifest, type Manifest } from '../../src/data/manifest';
import { mergeDatasets } from '../../src/data/merge';
import { UserError } from '../../src/util/errors';
import { Rng } from '../../src/util/rng';
import { shardOfKey } from '../../src/util/shard';
import { buildFrom, tmpDir } from './helpers';

const PARTS = 3;

/**
 * NDL-kind documents (whole-document packing; some longer than a 33-token row, so dropped) and
 * text documents (stream packing), with ids that the shard hash spreads over three parts.
 */
function documents(): { ndl: string[]; text: string[] } {
  const rng = Rng.from(5, 'merge-test');
  const words = ['x = 1', 'n += 2', 'return y', 'for i in r:', 'é', '∑', 'pass'];
  const body = (min: number, max: number) => {
    const len = rng.range(min, max);
    let t = '';
    while (t.length < len) t += rng.choice(words) + ' ';
    return t.slice(0, len);
  };
  const ndl: string[] = [];
  for (let p = 0; p < 60; p++) {
    for (const direction of ['forward', 'inverse']) {
      ndl.push(JSON.stringify({ id: `prog-${p}`, direction, actions: [], text: `<|begin_of_text|>${body(3, 40)}<|end_of_text|>` }));
    }
  }
  const text: string[] = [];
  for (let d = 0; d < 80; d++) text.push(JSON.stringify({ id: `web-${d}`, text: body(5, 90) }));
  return { ndl, text };
}

function keyOf(line: string): string {
  return String((JSON.parse(line) as { id: string }).id);
}

function writeLines(file: string, lines: string[]): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines.map((l) => l + '\n').join(''));
  return file;
}

/** The manifest without the source paths, which name each build's own input files. */
function withoutPaths(m: Manifest) {
  return { ...m, sources: m.sources.map((s) => ({ ...s, path: '', relativePath: '' })) };
}

describe('data merge', () => {
  const dir = tmpDir('merge');
  const parts: string[] = [];
  let single: string;
  const over = { shardMb: 0.002, valFraction: 0.2 };

  beforeAll(async () => {
    const { ndl, text } = documents();
    const concatenated: { ndl: string[]; text: string[] } = { ndl: [], text: [] };
    for (let k = 0; k < PARTS; k++) {
      const mine = (lines: string[]) => lines.filter((l) => shardOfKey(keyOf(l), PARTS) === k);
      const n = writeLines(path.join(dir, `in-${k}`, 'ndl.jsonl'), mine(ndl));
      const t = writeLines(path.join(dir, `in-${k}`, 'web.jsonl'), mine(text));
      concatenated.ndl.push(...mine(ndl));
      concatenated.text.push(...mine(text));
      const part = path.join(dir, `part-${k}`);
      await buildFrom(part, [`traces=${n}:ndl`, `web=${t}:text`], over);
      parts.push(part);
    }
    const n = writeLines(path.join(dir, 'in-all', 'ndl.jsonl'), concatenated.ndl);
    const t = writeLines(path.join(dir, 'in-all', 'web.jsonl'), concatenated.text);
    single = path.join(dir, 'single');
    await buildFrom(single, [`traces=${n}:ndl`, `web=${t}:text`], over);
  });

  it('equals the single-machine build of the concatenated documents, shard for shard and byte for byte', () => {
    const out = path.join(dir, 'merged');
    const merged = mergeDatasets({ parts, out, force: false });
    const want = readManifest(single);
    // The premise: both packings occur, packed rows span several shards, and some documents are dropped.
    expect(want.sources.map((s) => s.packing?.mode ?? 'stream')).toEqual(['whole_documents', 'stream']);
    expect(want.sources[0].packing!.documentsDropped).toBeGreaterThan(0);
    expect(want.sources[1].train.shards.length).toBeGreaterThan(2);
    // Each part's stream ends in a padded row; the merged stream runs across part boundaries.
    const partRows = parts.reduce((a, p) => a + readManifest(p).sources[1].train.rows, 0);
    expect(partRows).toBeGreaterThan(want.sources[1].train.rows);

    expect(withoutPaths(merged)).toEqual(withoutPaths(want));
    expect(readManifest(out)).toEqual(merged);
    // Recorded paths still lead to the parts' inputs from the merged directory.
    expect(merged.sources[0].relativePath).toBe(parts.map((p) => path.relative(out, path.join(path.dirname(p), `in-${p.slice(-1)}`, 'ndl.jsonl'))).join(', '));
    for (const s of want.sources) {
      for (const sh of [...s.train.shards, ...s.val.shards]) {
        expect(fs.readFileSync(path.join(out, sh.file)).equals(fs.readFileSync(path.join(single, sh.file)))).toBe(true);
      }
    }
    const files = (d: string) => ['train', 'val'].flatMap((s) => fs.readdirSync(path.join(d, s)).map((f) => `${s}/${f}`)).sort();
    expect(files(out)).toEqual(files(single));
  });

  it('gives the same loader order for the same seed', () => {
    const out = path.join(dir, 'merged-loader');
    mergeDatasets({ parts, out, force: false });
    const opts = { weights: { traces: 2, web: 1 }, batchSize: 4, seed: 9, shuffleWindow: 16 };
    const a = new MixtureLoader({ ...opts, datasets: [out] });
    const b = new MixtureLoader({ ...opts, datasets: [single] });
    for (let i = 0; i < 40; i++) {
      const x = a.next();
      const y = b.next();
      expect(Buffer.from(x.ids.buffer).equals(Buffer.from(y.ids.buffer))).toBe(true);
      expect(Buffer.from(x.docIds.buffer).equals(Buffer.from(y.docIds.buffer))).toBe(true);
      expect(Buffer.from(x.lossMask.buffer).equals(Buffer.from(y.lossMask.buffer))).toBe(true);
    }
    expect(a.state()).toEqual(b.state());
  });

  it('refuses parts built differently, naming the file and the field', async () => {
    const odd = path.join(dir, 'odd');
    const { text } = documents();
    await buildFrom(odd, [`traces=${writeLines(path.join(dir, 'in-odd', 'n.jsonl'), documents().ndl.slice(0, 4))}:ndl`, `web=${writeLines(path.join(dir, 'in-odd', 'w.jsonl'), text.slice(0, 4))}:text`], {
      ...over,
      seqLen: 16,
    });
    const run = () => mergeDatasets({ parts: [parts[0], odd], out: path.join(dir, 'bad'), force: false });
    expect(run).toThrow(UserError);
    expect(run).toThrow(`${path.join(odd, 'manifest.json')}: seqLen is 16, ${path.join(parts[0], 'manifest.json')} has 32`);
  });

  it('never overwrites a data set without --force, nor writes into a part', () => {
    const out = path.join(dir, 'merged-twice');
    mergeDatasets({ parts, out, force: false });
    expect(() => mergeDatasets({ parts, out, force: false })).toThrow('already holds a data set');
    expect(() => mergeDatasets({ parts, out, force: true })).not.toThrow();
    expect(() => mergeDatasets({ parts, out: parts[1], force: true })).toThrow('is one of the parts');
  });
});

import * as fs from 'fs';
import * as path from 'path';
import { DEFAULT_DEDUP, Deduplicator } from '../../src/data/dedup';
import { mergeDatasets } from '../../src/data/merge';
import { MinHasher, estimatedJaccard, shingleHashes } from '../../src/data/minhash';
import { buildFrom, FIXTURES, tmpDir } from './helpers';

/** Exact and near-duplicate removal (src/data/dedup.ts) with the settings docs/data.md states. */
const dir = tmpDir('dedup');

/** A module of `n` distinct functions: real-looking code with enough shingles for MinHash to be sharp. */
function module(tag: string, n: number): string {
  const lines = [`"""Helpers for ${tag}."""`, 'import os', ''];
  for (let i = 0; i < n; i++) {
    lines.push(`def ${tag}_${i}(items, limit=${i + 2}):`);
    lines.push(`    """Return the first ${i + 2} ${tag} entries that pass check_${i}."""`);
    lines.push(`    out = [x for x in items if check_${i}(x, ${i * 7 % 11})]`);
    lines.push(`    return sorted(out, key=lambda v: v.${tag}_key_${i})[:limit]`, '');
  }
  return lines.join('\n');
}

const A = module('parse', 12);
/** A with a license header and one line edited: the copy a vendored fork would hold. */
const A_EDITED = `# Copyright (c) 2024 Someone\n# SPDX-License-Identifier: MIT\n${A.replace('return sorted(out, key=lambda v: v.parse_key_3)[:limit]', 'return sorted(out, key=lambda v: v.parse_key_3, reverse=True)[:limit]')}`;
/** A reindented and re-cased: the same tokens, so the same shingle set. */
const A_REFORMATTED = A.replace(/ {4}/g, '\t').replace(/Return/g, 'RETURN');
const B = module('render', 12);
/** Shares A's structure and half its functions: related, not a duplicate. */
const A_HALF = `${A.split('\ndef ').slice(0, 7).join('\ndef ')}\n${module('emit', 6)}`;

function jaccard(a: Uint32Array, b: Uint32Array): number {
  const sa = new Set(a);
  let inter = 0;
  for (const x of b) if (sa.has(x)) inter++;
  return inter / (sa.size + b.length - inter);
}

describe('MinHash', () => {
  it('estimates the Jaccard similarity of shingle sets', () => {
    const h = new MinHasher(DEFAULT_DEDUP.hashes, 0);
    for (const other of [A_EDITED, A_HALF, B]) {
      const [sa, sb] = [shingleHashes(A, 5), shingleHashes(other, 5)];
      expect(Math.abs(estimatedJaccard(h.signature(sa), h.signature(sb)) - jaccard(sa, sb))).toBeLessThan(0.15);
    }
    expect(jaccard(shingleHashes(A, 5), shingleHashes(A_REFORMATTED, 5))).toBe(1);
  });

  it('is seeded: the same seed gives the same signature, another seed another one', () => {
    const s = shingleHashes(A, 5);
    expect(new MinHasher(112, 7).signature(s)).toEqual(new MinHasher(112, 7).signature(s));
    expect(new MinHasher(112, 8).signature(s)).not.toEqual(new MinHasher(112, 7).signature(s));
  });
});

describe('Deduplicator', () => {
  it('removes exact and near copies, keeps distinct and merely related documents', () => {
    const d = new Deduplicator(DEFAULT_DEDUP);
    expect(d.check(A, 0)).toBeUndefined();
    expect(d.check(B, 0)).toBeUndefined();
    expect(d.check(A_HALF, 0)).toBeUndefined();
    expect(d.check(A, 0)).toEqual({ kind: 'exact', ofSource: 0 });
    expect(d.check(A_EDITED, 1)).toEqual({ kind: 'near', ofSource: 0 });
    expect(d.check(A_REFORMATTED, 1)).toEqual({ kind: 'near', ofSource: 0 });
    expect(d.check('', 0)).toBeUndefined();
    expect(d.check('', 1)).toEqual({ kind: 'exact', ofSource: 0 });
  });

  it('the threshold decides: at 0.99 the edited copy is kept', () => {
    const d = new Deduplicator({ ...DEFAULT_DEDUP, threshold: 0.99 });
    d.check(A, 0);
    expect(d.check(A_EDITED, 0)).toBeUndefined();
    expect(d.check(A_REFORMATTED, 0)).toEqual({ kind: 'near', ofSource: 0 });
  });
});

describe('data build with deduplication', () => {
  const code = path.join(dir, 'code.jsonl');
  const web = path.join(dir, 'web.jsonl');
  const ndl = path.join(dir, 'ndl.jsonl');
  beforeAll(() => {
    const docs = (texts: string[]) => texts.map((text, i) => JSON.stringify({ id: `d${i}`, text })).join('\n') + '\n';
    fs.writeFileSync(code, docs([A, B, A_EDITED, A_HALF, A]));
    fs.writeFileSync(web, docs(['A paragraph about the weather in spring, long enough to shingle well. '.repeat(4), B, A_REFORMATTED]));
    // Two copies of one NDL document: NDL sources are never deduplicated.
    const one = fs.readFileSync(path.join(FIXTURES, 'ndl.jsonl'), 'utf8').split('\n')[0];
    fs.writeFileSync(ndl, `${one}\n${one}\n`);
  });
  const sources = () => [`code=${code}:code`, `web=${web}:text`, `traces=${ndl}:ndl`];

  it('removes copies within and across code and text sources, counts them, leaves NDL alone', async () => {
    const m = await buildFrom(path.join(dir, 'on'), sources(), { dedup: DEFAULT_DEDUP, valFraction: 0 });
    const [c, w, t] = m.sources;
    expect(c.dedup).toEqual({ exact: 1, near: 1, acrossSources: 0 });
    expect(c.train.documents).toBe(3);
    expect(w.dedup).toEqual({ exact: 1, near: 1, acrossSources: 2 });
    expect(w.train.documents).toBe(1);
    expect(t.dedup).toBeUndefined();
    expect(t.train.documents).toBe(2);
    expect(m.filters?.dedup).toEqual(DEFAULT_DEDUP);
  });

  it('is deterministic, and off keeps every document and records no counts', async () => {
    const again = await buildFrom(path.join(dir, 'again'), sources(), { dedup: DEFAULT_DEDUP, valFraction: 0 });
    const first = await buildFrom(path.join(dir, 'on'), sources(), { dedup: DEFAULT_DEDUP, valFraction: 0, force: true });
    expect(again.sources.map((s) => s.train.shards.map((x) => x.sha256))).toEqual(first.sources.map((s) => s.train.shards.map((x) => x.sha256)));
    const off = await buildFrom(path.join(dir, 'off'), sources(), { dedup: false, valFraction: 0 });
    expect(off.sources.map((s) => s.train.documents)).toEqual([5, 3, 2]);
    expect(off.sources.map((s) => s.dedup)).toEqual([undefined, undefined, undefined]);
    expect(off.filters?.dedup).toBeNull();
  });

  it('data merge adds up the parts’ counts (each part deduplicated on its own)', async () => {
    const parts = [0, 1].map((k) => path.join(dir, `part-${k}`));
    for (const p of parts) await buildFrom(p, [`code=${code}:code`], { dedup: DEFAULT_DEDUP, valFraction: 0 });
    const merged = mergeDatasets({ parts, out: path.join(dir, 'merged') });
    expect(merged.sources[0].dedup).toEqual({ exact: 2, near: 2, acrossSources: 0 });
    expect(merged.sources[0].train.documents).toBe(6);
    await buildFrom(path.join(dir, 'part-off'), [`code=${code}:code`], { dedup: false, valFraction: 0 });
    expect(() => mergeDatasets({ parts: [parts[0], path.join(dir, 'part-off')], out: path.join(dir, 'merged-bad') })).toThrow(/filters is .*"dedup":null/);
  });
});

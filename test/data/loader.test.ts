import * as fs from 'fs';
import * as path from 'path';
import { MixtureLoader, type LoaderBatch, type LoaderOptions, type LoaderState } from '../../src/data/loader';
import { ValidationStream } from '../../src/data/validation';
import { readManifest } from '../../src/data/manifest';
import { buildMixture, tmpDir } from './helpers';

function bytesOf(b: LoaderBatch): Buffer {
  return Buffer.concat([Buffer.from(b.ids.buffer), Buffer.from(b.lossMask.buffer), Buffer.from(b.docIds.buffer), Buffer.from(b.sources.buffer)]);
}

describe('MixtureLoader', () => {
  const dir = tmpDir('loader');
  let out: string;
  let opts: LoaderOptions;

  beforeAll(async () => {
    ({ out } = await buildMixture(dir));
    opts = { datasets: [out], weights: { a: 5, b: 3, c: 2 }, batchSize: 8, seed: 11, shuffleWindow: 8 };
  });

  it('realizes the mixture weights within 1 percentage point over 1M tokens', () => {
    const loader = new MixtureLoader({ ...opts, batchSize: 32 });
    const perSource = [0, 0, 0];
    let total = 0;
    while (total < 1_000_000) {
      const b = loader.next();
      for (let r = 0; r < b.batchSize; r++) {
        let n = 0;
        for (let i = 1; i < (b.seqLen + 1); i++) if (b.docIds[r * (b.seqLen + 1) + i] >= 0) n++;
        perSource[b.sources[r]] += n;
        total += n;
      }
    }
    expect(loader.sourceNames).toEqual(['a', 'b', 'c']);
    const want = [0.5, 0.3, 0.2];
    perSource.forEach((n, i) => expect(Math.abs(n / total - want[i])).toBeLessThan(0.01));
    // Source c (~100 rows) went through many epochs: the state says so.
    expect(loader.state().sources.c.epoch).toBeGreaterThan(10);
  });

  it('visits every row of a source exactly once per epoch, in a seed-dependent order', () => {
    const rowsOfC = readManifest(out).sources[2].train.rows;
    const seen = (seed: number) => {
      const loader = new MixtureLoader({ ...opts, seed, weights: { c: 1 }, batchSize: 1 });
      const rows: string[] = [];
      for (let i = 0; i < rowsOfC; i++) rows.push(Buffer.from(loader.next().ids.buffer).toString('hex'));
      return rows;
    };
    const r1 = seen(1);
    const r2 = seen(2);
    expect(new Set(r1).size).toBe(rowsOfC); // no row twice within an epoch (rows are distinct text)
    expect([...r1].sort()).toEqual([...r2].sort());
    expect(r1).not.toEqual(r2);
  });

  it('resumes from a serialized state with exactly the next 100 batches (mid-shard, shard boundary, epoch boundary)', () => {
    const horizon = 400;
    const reference = new MixtureLoader(opts);
    const states: LoaderState[] = [reference.state()];
    const batches: Buffer[] = [];
    for (let k = 0; k < horizon + 100; k++) {
      batches.push(bytesOf(reference.next()));
      states.push(JSON.parse(JSON.stringify(reference.state())) as LoaderState);
    }
    // Find a k right after source a crossed into a new shard, and one right after c's epoch 0 ended.
    const manifest = readManifest(out);
    const aShardRows = manifest.sources[0].train.shards[0].rows;
    const shardK = states.findIndex((s, k) => k > 0 && Math.floor(s.sources.a.taken / aShardRows) > Math.floor(states[k - 1].sources.a.taken / aShardRows));
    const epochK = states.findIndex((s) => s.sources.c.epoch >= 1);
    expect(shardK).toBeGreaterThan(0);
    expect(epochK).toBeGreaterThan(0);
    expect(epochK).toBeLessThan(horizon);
    // States are small: a few integers per source.
    expect(JSON.stringify(states[epochK]).length).toBeLessThan(600);
    for (const k of [0, 1, 7, shardK, epochK, epochK + 1, horizon]) {
      const restored = new MixtureLoader(opts, JSON.parse(JSON.stringify(states[k])) as LoaderState);
      for (let j = 0; j < 100; j++) {
        const b = restored.next();
        expect(b.step).toBe(k + j);
        if (!bytesOf(b).equals(batches[k + j])) throw new Error(`batch ${k + j} differs after resuming at k=${k}`);
      }
    }
  });

  it('refuses a state from another seed, batch size or weights', () => {
    const state = new MixtureLoader(opts).state();
    expect(() => new MixtureLoader({ ...opts, seed: 12 }, state)).toThrow(/seed/);
    expect(() => new MixtureLoader({ ...opts, batchSize: 4 }, state)).toThrow(/batchSize/);
    expect(() => new MixtureLoader({ ...opts, weights: { a: 1, b: 1, c: 1 } }, state)).toThrow(/weights\.a/);
  });

  it('yields [B, T+1] tokens, masks and doc ids consistent with each other', () => {
    const b = new MixtureLoader(opts).next();
    expect(b.ids).toHaveLength(8 * 33);
    expect(b.lossMask).toHaveLength(8 * 33);
    expect(b.docIds).toHaveLength(8 * 33);
    const { bosId, padId } = readManifest(out).tokenizer;
    for (let i = 0; i < b.ids.length; i++) {
      if (b.docIds[i] < 0) expect([b.ids[i], b.lossMask[i]]).toEqual([padId, 0]);
      if (b.ids[i] === bosId) expect(b.lossMask[i]).toBe(0);
      // Column 0 is never a target (TokenBatch's invariant); every other real token but BOS is.
      if (i % 33 === 0) expect(b.lossMask[i]).toBe(0);
      else if (b.docIds[i] >= 0 && b.ids[i] !== bosId) expect(b.lossMask[i]).toBe(1);
    }
  });

  it('defaults to weights proportional to source tokens', () => {
    const loader = new MixtureLoader({ ...opts, weights: undefined });
    const m = readManifest(out);
    const total = m.sources.reduce((a, s) => a + s.train.tokens, 0);
    expect(loader.state().weights.a).toBeCloseTo(m.sources[0].train.tokens / total, 12);
  });
});

describe('ValidationStream', () => {
  it('is fixed and repeatable, and covers every validation row once, by source', async () => {
    const { out, manifest } = await buildMixture(tmpDir('val'));
    const stream = new ValidationStream({ datasets: [out], batchSize: 5 });
    const pass = () => Array.from(stream.batches(), (b) => ({ source: b.source, rows: b.batchSize, hex: Buffer.from(b.ids.buffer).toString('hex') }));
    const first = pass();
    expect(pass()).toEqual(first);
    for (const s of manifest.sources) {
      const mine = first.filter((b) => b.source === s.name);
      expect(mine.reduce((a, b) => a + b.rows, 0)).toBe(s.val.rows);
      expect(s.val.rows).toBeGreaterThan(0);
    }
    const capped = Array.from(new ValidationStream({ datasets: [out], batchSize: 5, sources: ['b'], maxRowsPerSource: 7 }).batches());
    expect(capped.map((b) => b.batchSize)).toEqual([5, 2]);
    expect(fs.existsSync(path.join(out, 'val'))).toBe(true);
  });
});

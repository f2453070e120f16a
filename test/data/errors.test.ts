import * as fs from 'fs';
import * as path from 'path';
import { MixtureLoader } from '../../src/data/loader';
import { readManifest, MANIFEST_FILE } from '../../src/data/manifest';
import { encodeShard, readShard, sha256Hex } from '../../src/data/shard';
import { inspectDataset } from '../../src/data/inspect';
import { isUserError } from '../../src/util/errors';
import { buildMixture, tmpDir } from './helpers';

/** Each broken data set gets a fresh copy of a good one. */
describe('broken data sets give one clear error naming the file', () => {
  const base = tmpDir('errors');
  let good: string;
  let n = 0;

  beforeAll(async () => {
    ({ out: good } = await buildMixture(base));
  });

  function copy(): { dir: string; shard: string } {
    const dir = path.join(base, `copy${n++}`);
    fs.cpSync(good, dir, { recursive: true });
    const shard = path.join(dir, readManifest(dir).sources[0].train.shards[0].file);
    return { dir, shard };
  }

  /** Runs a loader through one epoch of source a, so every one of its shards is read. */
  function load(dir: string, tokenizerSha256?: string): void {
    const loader = new MixtureLoader({ datasets: [dir], weights: { a: 1 }, batchSize: 2, seed: 0, tokenizerSha256 });
    const rows = loader.dataset.sources[0].rows;
    for (let i = 0; i < rows / 2 + 1; i++) loader.next();
  }

  function expectUserError(fn: () => void, pattern: RegExp): string {
    try {
      fn();
    } catch (e) {
      expect(isUserError(e)).toBe(true);
      const msg = (e as Error).message;
      expect(msg).toMatch(pattern);
      expect(msg.split('\n')).toHaveLength(1);
      return msg;
    }
    throw new Error(`expected an error matching ${pattern}`);
  }

  it('a good copy loads', () => {
    expect(() => load(copy().dir)).not.toThrow();
  });

  it('truncated shard', () => {
    const { dir, shard } = copy();
    fs.truncateSync(shard, fs.statSync(shard).size - 100);
    const msg = expectUserError(() => load(dir), /is truncated/);
    expect(msg).toContain(shard);
  });

  it('corrupted shard (one flipped byte in the token data)', () => {
    const { dir, shard } = copy();
    const bytes = fs.readFileSync(shard);
    bytes[Math.floor(bytes.length / 2)] ^= 0x5a;
    fs.writeFileSync(shard, bytes);
    const msg = expectUserError(() => load(dir), /is corrupted/);
    expect(msg).toContain(shard);
  });

  it('shard that is not Arrow at all', () => {
    const { dir, shard } = copy();
    fs.writeFileSync(shard, Buffer.alloc(fs.statSync(shard).size, 7));
    const msg = expectUserError(() => load(dir), /is corrupted/);
    expect(msg).toContain(shard);
  });

  it('shard built with another tokenizer', () => {
    const { dir, shard } = copy();
    const m = readManifest(dir);
    const entry = m.sources[0].train.shards[0];
    const identity = { tokenizerSha256: m.tokenizer.sha256, seqLen: m.seqLen, tokenDtype: m.tokenDtype, source: 'a', split: 'train', index: 0 };
    const data = readShard({ file: shard, manifestFile: 'x', bytes: entry.bytes, sha256: entry.sha256, rows: entry.rows, verifySha256: true, identity });
    const foreign = encodeShard(data, { ...identity, tokenizerSha256: sha256Hex(Buffer.from('another tokenizer')) });
    expect(foreign.length).toBe(entry.bytes); // same size: only the identity differs
    fs.writeFileSync(shard, foreign);
    const msg = expectUserError(() => load(dir), /was built with another tokenizer/);
    expect(msg).toContain(shard);
  });

  it('data set built with another tokenizer than the trainer expects', () => {
    const { dir } = copy();
    const msg = expectUserError(() => load(dir, sha256Hex(Buffer.from('trainer tokenizer'))), /built with tokenizer sha256/);
    expect(msg).toContain(path.join(dir, MANIFEST_FILE));
  });

  it('manifest and shard disagree on the row count', () => {
    const { dir, shard } = copy();
    const file = path.join(dir, MANIFEST_FILE);
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    m.sources[0].train.shards[0].rows += 1;
    m.sources[0].train.rows += 1;
    fs.writeFileSync(file, JSON.stringify(m));
    const msg = expectUserError(() => load(dir), /does not match .*row count is \d+, the manifest says \d+/);
    expect(msg).toContain(shard);
  });

  it('manifest and shard disagree on seq_len', () => {
    const { dir } = copy();
    const file = path.join(dir, MANIFEST_FILE);
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    m.seqLen = 16;
    m.rowLen = 17;
    fs.writeFileSync(file, JSON.stringify(m));
    expectUserError(() => load(dir), /does not match .*seq_len is 32, the manifest says 16/);
  });

  it('missing shard and invalid manifest', () => {
    const { dir, shard } = copy();
    fs.rmSync(shard);
    expect(expectUserError(() => load(dir), /missing/)).toContain(shard);
    const file = path.join(dir, MANIFEST_FILE);
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    m.tokenDtype = 'float32';
    fs.writeFileSync(file, JSON.stringify(m));
    expect(() => load(dir)).toThrow(new RegExp(`invalid manifest ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\n  tokenDtype`));
  });

  it('inspect --verify finds a corrupted shard that is never sampled', async () => {
    const { dir } = copy();
    const m = readManifest(dir);
    const last = path.join(dir, m.sources[2].train.shards[m.sources[2].train.shards.length - 1].file);
    const bytes = fs.readFileSync(last);
    bytes[bytes.length - 200] ^= 1;
    fs.writeFileSync(last, bytes);
    await expect(inspectDataset({ dir, split: 'train', row: 0, verify: true, maxChars: 100 }, () => undefined)).rejects.toThrow(last);
  });
});

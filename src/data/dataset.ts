/**
 * Opens one or more built data sets as a list of sources with their shards, checking what can
 * be checked cheaply up front (manifest schema, one tokenizer and seq_len for all, every shard
 * present with its recorded size) so a broken data set fails at start, not hours into training.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { MANIFEST_FILE, readManifest, type Manifest, type ManifestSource, type ShardEntry, type DataSplit } from './manifest';
import { readShard, type ShardData } from './shard';

export interface OpenedShard {
  entry: ShardEntry;
  file: string;
}

export interface OpenedSource {
  name: string;
  manifestFile: string;
  manifest: Manifest;
  source: ManifestSource;
  shards: OpenedShard[];
  rows: number;
  tokens: number;
}

export interface OpenedDataset {
  sources: OpenedSource[];
  seqLen: number;
  rowLen: number;
  tokenizerSha256: string;
  vocabSize: number;
  padId: number;
  /** Hash of everything the row order depends on: sources, shard hashes, seq_len, tokenizer. */
  fingerprint: string;
}

export interface OpenOptions {
  /** Fail unless the data set was built with this tokenizer (the trainer's). */
  tokenizerSha256?: string;
}

export function openDatasets(dirs: string[], split: DataSplit, opts: OpenOptions = {}): OpenedDataset {
  if (!dirs.length) throw new UserError('no data set given');
  const sources: OpenedSource[] = [];
  let first: { m: Manifest; file: string } | undefined;
  for (const dir of dirs) {
    const manifestFile = path.join(dir, MANIFEST_FILE);
    const m = readManifest(dir);
    if (opts.tokenizerSha256 && m.tokenizer.sha256 !== opts.tokenizerSha256) {
      throw new UserError(
        `${manifestFile} was built with tokenizer sha256 ${m.tokenizer.sha256.slice(0, 12)}… (${m.tokenizer.path}), ` +
          `not the expected ${opts.tokenizerSha256.slice(0, 12)}…; rebuild the data set with this tokenizer`,
      );
    }
    if (!first) first = { m, file: manifestFile };
    else {
      if (m.tokenizer.sha256 !== first.m.tokenizer.sha256) throw new UserError(`${manifestFile} and ${first.file} were built with different tokenizers`);
      if (m.seqLen !== first.m.seqLen) throw new UserError(`${manifestFile} has seq_len ${m.seqLen}, ${first.file} has ${first.m.seqLen}`);
    }
    for (const s of m.sources) {
      if (sources.some((o) => o.name === s.name)) throw new UserError(`source "${s.name}" appears in two data sets (${manifestFile}); names must be unique`);
      const shards = s[split].shards.map((entry) => {
        const file = path.join(dir, entry.file);
        let size: number;
        try {
          size = fs.statSync(file).size;
        } catch {
          throw new UserError(`shard ${file} listed in ${manifestFile} is missing`);
        }
        if (size < entry.bytes) throw new UserError(`shard ${file} is truncated: ${size} bytes, ${manifestFile} says ${entry.bytes}`);
        if (size !== entry.bytes) throw new UserError(`shard ${file} has ${size} bytes, ${manifestFile} says ${entry.bytes} (altered or from another build)`);
        return { entry, file };
      });
      const rows = shards.reduce((a, sh) => a + sh.entry.rows, 0);
      if (rows !== s[split].rows) throw new UserError(`${manifestFile}: source ${s.name} ${split} rows ${s[split].rows} differ from the sum over its shards (${rows})`);
      sources.push({ name: s.name, manifestFile, manifest: m, source: s, shards, rows, tokens: s[split].tokens });
    }
  }
  const m = first!.m;
  const fp = createHash('sha256');
  fp.update(`${m.tokenizer.sha256}|${m.seqLen}|${split}`);
  for (const s of sources) fp.update(`|${s.name}:${s.shards.map((sh) => sh.entry.sha256).join(',')}`);
  return {
    sources,
    seqLen: m.seqLen,
    rowLen: m.rowLen,
    tokenizerSha256: m.tokenizer.sha256,
    vocabSize: m.tokenizer.vocabSize,
    padId: m.tokenizer.padId,
    fingerprint: fp.digest('hex').slice(0, 16),
  };
}

/** Reads and fully checks one shard of an opened source. */
export function loadShard(src: OpenedSource, shardIndex: number, split: DataSplit, verifySha256: boolean): ShardData {
  const sh = src.shards[shardIndex];
  return readShard({
    file: sh.file,
    manifestFile: src.manifestFile,
    bytes: sh.entry.bytes,
    sha256: sh.entry.sha256,
    rows: sh.entry.rows,
    verifySha256,
    identity: {
      tokenizerSha256: src.manifest.tokenizer.sha256,
      seqLen: src.manifest.seqLen,
      tokenDtype: src.manifest.tokenDtype,
      source: src.name,
      split,
      index: shardIndex,
    },
  });
}

import * as fs from 'fs';
import * as path from 'path';
import { Rng } from '../../src/util/rng';
import { tempDir } from '../helpers/tmp';
import { buildDataset, type BuildOptions } from '../../src/data/build';
import { parseSourceSpec } from '../../src/data/sources';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'data');

/** A temp dir removed after the test file (test/helpers/tmp.ts). */
export function tmpDir(tag: string): string {
  return tempDir(`data-${tag}`);
}

/** A JSONL of `count` synthetic documents with lengths in [minLen, maxLen] characters. */
export function writeSyntheticJsonl(file: string, seed: number, count: number, minLen: number, maxLen: number): void {
  // Keyed by the file name, not its (random temp) directory: the same bytes on every run.
  const rng = Rng.from(seed, 'synthetic', path.basename(file));
  const words = ['alpha', 'beta', 'gamma', 'delta', 'x = 1', 'return y', 'for i in range(3):', '\n', 'é', '∑'];
  const lines: string[] = [];
  for (let d = 0; d < count; d++) {
    const len = rng.range(minLen, maxLen);
    let text = '';
    while (text.length < len) text += rng.choice(words) + ' ';
    lines.push(JSON.stringify({ id: `doc-${seed}-${d}`, text: text.slice(0, len) }));
  }
  fs.writeFileSync(file, lines.join('\n') + '\n');
}

export async function buildFrom(out: string, sources: string[], over: Partial<BuildOptions> = {}) {
  return buildDataset({
    sources: sources.map(parseSourceSpec),
    out,
    tokenizer: 'byte',
    seqLen: 32,
    shardMb: 0.005,
    valFraction: 0.1,
    splitSeed: 0,
    maskContext: false,
    workers: 0,
    force: false,
    quiet: true,
    ...over,
  });
}

/**
 * Three synthetic text sources of different sizes (about 600, 300 and 100 rows of 33 tokens)
 * in ~22-row shards: small enough to build in a second, big enough for shard and epoch
 * boundaries to occur within a few hundred batches.
 */
export async function buildMixture(dir: string) {
  const inputs = path.join(dir, 'inputs');
  fs.mkdirSync(inputs, { recursive: true });
  writeSyntheticJsonl(path.join(inputs, 'a.jsonl'), 1, 200, 50, 150);
  writeSyntheticJsonl(path.join(inputs, 'b.jsonl'), 2, 100, 50, 150);
  writeSyntheticJsonl(path.join(inputs, 'c.jsonl'), 3, 35, 50, 150);
  const out = path.join(dir, 'mix');
  const manifest = await buildFrom(out, ['a', 'b', 'c'].map((n) => `${n}=${path.join(inputs, `${n}.jsonl`)}:text`));
  return { out, manifest };
}

import * as fs from 'fs';
import * as path from 'path';
import { buildDataset } from '../src/data/build';
import { assetPath } from '../src/util/paths';

/**
 * The throughput benchmarks' data: the fixture training corpus as one code source, tokenized
 * with `tokenizer` into rows of seqLen + 1 tokens, in `dir` (reused when already built there).
 * Throughput does not depend on what the tokens say, only on the shape.
 */
export async function benchCorpus(dir: string, tokenizer: string, seqLen: number): Promise<string> {
  if (fs.existsSync(path.join(dir, 'manifest.json'))) return dir;
  await buildDataset({
    sources: [{ name: 'code', path: assetPath('test/fixtures/train/corpus.jsonl'), kind: 'code' }],
    out: dir,
    tokenizer,
    seqLen,
    shardMb: 64,
    valFraction: 0.05,
    splitSeed: 0,
    maskContext: false,
    workers: 0,
    force: true,
    quiet: true,
  });
  return dir;
}

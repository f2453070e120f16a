import { spawnSync } from 'child_process';
import * as path from 'path';

const root = path.resolve(__dirname, '../..');

/** The training tests' data set: the fixture corpus packed by `ndbg data build` with the byte tokenizer, rows of 33 tokens. */
export function buildFixtureCorpus(out: string): void {
  const built = spawnSync(
    process.execPath,
    [
      path.join(root, 'bin', 'ndbg.js'), 'data', 'build', '--source', `code=${path.join(root, 'test/fixtures/train/corpus.jsonl')}:code`,
      '--tokenizer', 'byte', '--seq-len', '32', '--val-fraction', '0.05', '--workers', '0', '--quiet', '--out', out,
    ],
    { cwd: root, encoding: 'utf8' },
  );
  if (built.status !== 0) throw new Error(built.stderr);
}

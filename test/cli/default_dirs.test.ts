import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { tempDir } from '../helpers/tmp';

/**
 * The default output folders of data/README.md and checkpoints/README.md, through the real CLI
 * (dist/, built by test/global-setup.ts) run in a fresh working directory: `ndbg data build`
 * without --out writes data/NAME (NAME the --source names), `ndbg train` without --out writes
 * checkpoints/NAME for --config …/NAME.json. Two steps of the d=16 fixture model on the cpu backend.
 */
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'bin', 'ndbg.js');
const cwd = tempDir('default-dirs');

function ndbg(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', timeout: 120000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

it('data build lands in data/NAME and train in checkpoints/NAME when --out is not given', () => {
  const corpus = path.join(root, 'test/fixtures/train/corpus.jsonl');
  const built = ndbg(['data', 'build', '--source', `code=${corpus}:code`, '--tokenizer', 'byte', '--seq-len', '32', '--val-fraction', '0.05', '--workers', '0', '--quiet']);
  expect([built.code, built.stderr]).toEqual([0, '']);
  expect(built.stdout).toContain(`wrote ${path.join('data', 'code')}/manifest.json`);
  expect(fs.existsSync(path.join(cwd, 'data', 'code', 'manifest.json'))).toBe(true);

  const config = path.join(root, 'test/fixtures/train/tiny-run.json');
  const trained = ndbg(['train', '--config', config, '--set', 'data.datasets=["data/code"]', '--steps', '2', '--backend', 'cpu', '--quiet']);
  expect([trained.code, trained.stderr]).toEqual([0, expect.not.stringMatching(/ndbg:/)]); // stderr: the backend line
  expect(trained.stdout).toContain(`→ ${path.join('checkpoints', 'tiny-run')}`);
  const run = path.join(cwd, 'checkpoints', 'tiny-run');
  expect(fs.existsSync(path.join(run, 'metrics.jsonl'))).toBe(true);
  expect(fs.existsSync(path.join(run, 'checkpoints', 'step-00000002', 'COMPLETE'))).toBe(true);
});

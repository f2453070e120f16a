import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * A data set manifest says where its inputs came from in a form that survives moving the tree:
 * trace-derived (NDL) sources carry the Python version of their traces (from the sidecar `ndbg
 * ndl` writes), and every path is stored as given and relative to the data set directory.
 */
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'bin', 'ndbg.js');

function ndbg(cwd: string, args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ndbg ${args.join(' ')} failed: ${r.stderr}`);
  return r;
}

test('NDL sources record the traces’ Python version; paths are stored as given and relative to the data set', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-provenance-'));
  try {
    const work = path.join(tmp, 'work');
    fs.mkdirSync(work);
    fs.copyFileSync(path.join(root, 'test/fixtures/ndl/programs.jsonl'), path.join(work, 'programs.jsonl'));
    ndbg(work, ['trace', '--input', 'programs.jsonl', '--out', 'traces.jsonl', '--quiet']);
    ndbg(work, ['ndl', '--traces', 'traces.jsonl', '--out', 'docs.jsonl', '--quiet']);
    const python = (JSON.parse(fs.readFileSync(path.join(work, 'traces.jsonl'), 'utf8').split('\n')[0]) as { python: string }).python;
    expect(python).toMatch(/^3\.\d+\.\d+/);
    const sidecar = JSON.parse(fs.readFileSync(path.join(work, 'docs.jsonl.manifest.json'), 'utf8'));
    expect(sidecar).toMatchObject({ python, traces: 'traces.jsonl', traces_relative: 'traces.jsonl', generator: { policy: 'sampled', seed: 0 } });

    const tokenizer = path.join(root, 'tokenizer', 'ndbg-2k.model');
    ndbg(work, ['data', 'build', '--source', 'ndl=docs.jsonl:ndl', '--out', '../data/mix', '--seq-len', '256', '--tokenizer', tokenizer, '--workers', '0', '--quiet']);
    const m = JSON.parse(fs.readFileSync(path.join(tmp, 'data', 'mix', 'manifest.json'), 'utf8'));
    expect(m.sources[0]).toMatchObject({ name: 'ndl', path: 'docs.jsonl', relativePath: '../../work/docs.jsonl', python });
    expect(m.tokenizer.path).toBe(tokenizer);
    expect(path.resolve(tmp, 'data', 'mix', m.tokenizer.relativePath)).toBe(tokenizer);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { checkpointName, checkpointsRoot, latestCheckpoint } from '../../src/train/checkpoint_dir';
import { readMetrics } from '../../src/train/metrics';
import { nativeSkipReason } from './native';

/**
 * The native TensorFlow backend through the real CLI (dist/, built by test/global-setup.ts):
 * `auto` picks it and says so; 30 training steps on wasm and on tensorflow give the same
 * losses (≤ 1e-4); a run SIGKILLed inside a checkpoint write and resumed on tensorflow
 * reproduces every loss and the final weights bit for bit.
 * Model and data: test/fixtures/train/tiny-run.json on the fixture corpus (byte tokenizer).
 */
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'bin', 'ndbg.js');
const config = path.join(root, 'test/fixtures/train/tiny-run.json');
const skip = nativeSkipReason();
let tmp: string;
let dataSet: string;

function runCli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function train(out: string, backend: string, extra: string[] = [], env: Record<string, string> = {}) {
  return runCli(['train', '--config', config, '--set', `data.datasets=${JSON.stringify([dataSet])}`, '--backend', backend, '--out', out, '--quiet', ...extra], env);
}

const losses = (run: string) => readMetrics(path.join(run, 'metrics.jsonl')).map((r) => r.loss);

(skip ? describe.skip : describe)('native tensorflow backend (CLI)', () => {
  beforeAll(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-native-'));
    dataSet = path.join(tmp, 'data');
    const built = runCli([
      'data', 'build', '--source', `code=${path.join(root, 'test/fixtures/train/corpus.jsonl')}:code`,
      '--tokenizer', 'byte', '--seq-len', '32', '--val-fraction', '0.05', '--workers', '0', '--quiet', '--out', dataSet,
    ]);
    expect(built.code).toBe(0);
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('--backend auto picks tensorflow and logs it', () => {
    const r = train(path.join(tmp, 'auto'), 'auto', ['--steps', '2']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^backend: tensorflow \(libtensorflow \d+\.\d+\.\d+, CPU/m);
    expect(readMetrics(path.join(tmp, 'auto', 'metrics.jsonl'))[0].backend).toBe('tensorflow');
  });

  it('30 steps on wasm and on tensorflow give the same losses (≤ 1e-4)', () => {
    const steps = ['--steps', '30', '--set', 'train.checkpoint_every=0'];
    const [wasm, native] = ['wasm', 'tensorflow'].map((b) => {
      const out = path.join(tmp, `parity-${b}`);
      const r = train(out, b, steps);
      expect(r.code).toBe(0);
      return losses(out);
    });
    expect(wasm).toHaveLength(30);
    expect(native).toHaveLength(30);
    const maxDiff = Math.max(...wasm.map((l, i) => Math.abs(l - native[i])));
    expect(maxDiff).toBeLessThanOrEqual(1e-4);
    expect(wasm[29]).toBeLessThan(wasm[0] - 0.5); // it trained: the comparison is not of two flat lines
  });

  it('a SIGKILL inside a checkpoint write, then --resume on tensorflow: identical losses and weights', () => {
    const ref = path.join(tmp, 'ref');
    expect(train(ref, 'tensorflow').code).toBe(0);
    const run = path.join(tmp, 'killed');
    const crashed = train(run, 'tensorflow', [], { NDBG_FAULT_CHECKPOINT: 'optimizer-written@6' });
    expect(crashed.signal).toBe('SIGKILL');
    expect(latestCheckpoint(run)!.step).toBe(3);
    const resumed = train(run, 'tensorflow', ['--resume']);
    expect(resumed.code).toBe(0);
    expect(losses(run)).toEqual(losses(ref));
    const weights = (r: string) => fs.readFileSync(path.join(checkpointsRoot(r), checkpointName(12), 'model.safetensors'));
    expect(weights(run).equals(weights(ref))).toBe(true);
  });
});

if (skip) {
  test('native tensorflow backend (CLI)', () => {
    // eslint-disable-next-line no-console
    console.log(`skipped: ${skip}`);
  });
}

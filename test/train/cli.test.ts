import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { latestCheckpoint, checkpointName, checkpointsRoot } from '../../src/train/checkpoint_dir';
import { readMetrics } from '../../src/train/metrics';
import { Rng } from '../../src/util/rng';

/**
 * The real `ndbg train` in child processes (dist/ is built by test/global-setup.ts): a SIGKILL at a
 * random step after a checkpoint, kills inside checkpoint writes, bad configs, the report.
 * Model: test/fixtures/train/tiny-run.json (d=16, 1 layer, 12 steps of 4 rows × 16 tokens) on the
 * cpu backend, data: the fixture corpus packed with the byte tokenizer.
 */
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'bin', 'ndbg.js');
const config = path.join(root, 'test/fixtures/train/tiny-run.json');
let tmp: string;
let dataSet: string;
let refDir: string;

function trainArgs(out: string, extra: string[] = []): string[] {
  return [cli, 'train', '--config', config, '--set', `data.datasets=${JSON.stringify([dataSet])}`, '--out', out, '--quiet', ...extra];
}

function runCli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const finalWeights = (run: string) => fs.readFileSync(path.join(checkpointsRoot(run), checkpointName(12), 'model.safetensors'));
const losses = (run: string) => readMetrics(path.join(run, 'metrics.jsonl')).map((r) => [r.step, r.loss, r.val_loss]);

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-train-cli-'));
  dataSet = path.join(tmp, 'data');
  const built = runCli([
    cli, 'data', 'build', '--source', `code=${path.join(root, 'test/fixtures/train/corpus.jsonl')}:code`,
    '--tokenizer', 'byte', '--seq-len', '32', '--val-fraction', '0.05', '--workers', '0', '--quiet', '--out', dataSet,
  ]);
  expect(built.stderr).toBe('');
  refDir = path.join(tmp, 'ref');
  const ref = runCli(trainArgs(refDir));
  if (ref.code !== 0) throw new Error(`reference run failed: ${ref.stderr}`);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('ndbg train (child processes)', () => {
  it('trains: the loss falls and metrics, config and checkpoints are written', () => {
    const m = readMetrics(path.join(refDir, 'metrics.jsonl'));
    expect(m.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const first = m[0].loss;
    const last = (m[9].loss + m[10].loss + m[11].loss) / 3;
    expect(last).toBeLessThan(first - 0.5);
    expect(m[0]).toEqual(
      expect.objectContaining({ lr: expect.any(Number), grad_norm: expect.any(Number), tokens_per_s: expect.any(Number), backend: 'wasm' }),
    );
    expect(m.filter((r) => r.val_loss !== undefined).map((r) => r.step)).toEqual([4, 8, 12]);
    expect(JSON.parse(fs.readFileSync(path.join(refDir, 'config.json'), 'utf8')).optim.weight_decay).toBe(0.1);
    expect(latestCheckpoint(refDir)!.step).toBe(12);
  });

  it('SIGKILL at a random step after a checkpoint, then --resume: identical losses and bitwise-identical weights', () => {
    const seed = Number(process.env.NDBG_TEST_SEED ?? Date.now() % 100000);
    // The child kills itself right after step killAt's metrics line (src/train/fault.ts), so
    // where it dies does not depend on how fast this machine is.
    const killAt = Rng.from(seed, 'kill').range(4, 12);
    const run = path.join(tmp, `killed-${seed}`);
    const killed = runCli(trainArgs(run), { NDBG_FAULT_AFTER_STEP: String(killAt) });
    expect({ seed, signal: killed.signal }).toEqual({ seed, signal: 'SIGKILL' });
    expect(readMetrics(path.join(run, 'metrics.jsonl')).map((r) => r.step).pop()).toBe(killAt);
    // Checkpoints every 3 steps; step killAt's own checkpoint was never written.
    const resumedFrom = latestCheckpoint(run)!.step;
    expect({ seed, resumedFrom }).toEqual({ seed, resumedFrom: 3 * Math.floor((killAt - 1) / 3) });
    const resumed = runCli([...trainArgs(run), '--resume']);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`trained steps ${resumedFrom}..12`);
    expect(losses(run)).toEqual(losses(refDir));
    expect(finalWeights(run).equals(finalWeights(refDir))).toBe(true);
  });

  // Every fault point is covered in-process (trainer_loop.test.ts); one is checked with a real kill here.
  it.each([['optimizer-written']])('a SIGKILL inside the checkpoint write (%s) leaves a resumable run', (point) => {
    const run = path.join(tmp, `fault-${point}`);
    const crashed = runCli(trainArgs(run), { NDBG_FAULT_CHECKPOINT: `${point}@6` });
    expect(crashed.signal).toBe('SIGKILL');
    expect(latestCheckpoint(run)!.step).toBe(point === 'renamed' ? 6 : 3);
    const resumed = runCli([...trainArgs(run), '--resume']);
    expect(resumed.stderr).not.toContain('error');
    expect(resumed.code).toBe(0);
    expect(losses(run)).toEqual(losses(refDir));
    expect(finalWeights(run).equals(finalWeights(refDir))).toBe(true);
  });

  it.each([
    ['an unknown field', ['--set', 'train.stepz=3'], /train: Unrecognized key\(s\) in object: 'stepz'/],
    ['a wrong type', ['--set', 'optim.beta1="high"'], /optim\.beta1: Expected number, received string/],
    ['a seq_len larger than the data', ['--set', 'data.seq_len=64'], /data\.seq_len: 64 is larger than the data's seq_len 32 \(.*manifest\.json\)/],
  ])('a bad config (%s) fails before training with one clear message', (_what, extra, message) => {
    const run = path.join(tmp, 'bad');
    const r = runCli(trainArgs(run, extra));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ndbg: invalid config /);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain('    at '); // no stack trace
    expect(fs.existsSync(run)).toBe(false);
  });

  it('ndbg report writes a self-contained HTML page', () => {
    const r = runCli([cli, 'report', refDir]);
    expect(r.code).toBe(0);
    const html = fs.readFileSync(path.join(refDir, 'report.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).toContain('&quot;weight_decay&quot;: 0.1');
  });
});

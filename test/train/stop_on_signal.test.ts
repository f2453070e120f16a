import { spawn } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { listCheckpoints } from '../../src/train/checkpoint_dir';
import { readMetrics } from '../../src/train/metrics';
import { buildFixtureCorpus } from './fixture_data';

/**
 * Ctrl-C and SIGTERM stop `ndbg train` after the current step, with a checkpoint at that step
 * and exit code 130 (docs/train.md). The run is far longer than the test, so only the signal
 * can end it in time. Model: test/fixtures/train/tiny-run.json on the fixture corpus.
 */
const root = path.resolve(__dirname, '../..');
const config = path.join(root, 'test/fixtures/train/tiny-run.json');
const STEPS = 1_000_000;
let tmp: string;
let dataSet: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-signal-'));
  dataSet = path.join(tmp, 'data');
  buildFixtureCorpus(dataSet);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Stopped {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts a run, sends `signal` once it has logged a few steps, and resolves when the process exits. */
function trainUntilSignal(runDir: string, signal: NodeJS.Signals): Promise<Stopped> {
  const args = [path.join(root, 'bin', 'ndbg.js'), 'train', '--config', config, '--out', runDir, '--steps', String(STEPS), '--quiet',
    '--set', `data.datasets=${JSON.stringify([dataSet])}`, '--set', 'train.checkpoint_every=100000'];
  const child = spawn(process.execPath, args, { cwd: root });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const metrics = path.join(runDir, 'metrics.jsonl');
  const poll = setInterval(() => {
    if (fs.existsSync(metrics) && fs.readFileSync(metrics, 'utf8').split('\n').length > 5) {
      clearInterval(poll);
      child.kill(signal);
    }
  }, 50);
  // Past this the signal was not heard: end the run so the test fails rather than hangs.
  const giveUp = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearInterval(poll);
      clearTimeout(giveUp);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.each(['SIGINT', 'SIGTERM'] as const)('ndbg train stopped by %s', (signal) => {
  test('ends after the current step with a checkpoint there and exit code 130', async () => {
    const runDir = path.join(tmp, signal);
    const r = await trainUntilSignal(runDir, signal);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 130, stderr: expect.not.stringContaining('internal error') });
    const steps = readMetrics(path.join(runDir, 'metrics.jsonl')).map((m) => m.step);
    const last = steps[steps.length - 1];
    expect(last).toBeGreaterThan(5);
    expect(last).toBeLessThan(STEPS);
    // The checkpoint is the step the signal ended, though checkpoint_every would write none before step 100000.
    expect(listCheckpoints(runDir).map((c) => c.step)).toEqual([last]);
    expect(r.stdout).toContain(`trained steps 0..${last} `);
  }, 120_000);
});

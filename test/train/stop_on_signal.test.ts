import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { listCheckpoints } from '../../src/train/checkpoint_dir';
import { readMetrics } from '../../src/train/metrics';
import { buildFixtureCorpus } from './fixture_data';
import { stopAfterSteps, type Stopped } from '../helpers/stop_after_steps';

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

/** Starts a run and sends `signal` once it has logged a few steps. */
function trainUntilSignal(runDir: string, signal: NodeJS.Signals): Promise<Stopped> {
  const args = [path.join(root, 'bin', 'ndbg.js'), 'train', '--config', config, '--out', runDir, '--steps', String(STEPS), '--quiet',
    '--set', `data.datasets=${JSON.stringify([dataSet])}`, '--set', 'train.checkpoint_every=100000'];
  return stopAfterSteps(args, { cwd: root, metrics: path.join(runDir, 'metrics.jsonl'), steps: 5, signal, giveUpMs: 60_000 });
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

import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { averagedSteps } from '../../src/train/average';
import { listCheckpoints } from '../../src/train/checkpoint_dir';
import { readMetrics } from '../../src/train/metrics';
import { stopAfterSteps, type Stopped } from '../helpers/stop_after_steps';
import { tempDir } from '../helpers/tmp';

/**
 * A quickstart stopped in training (Ctrl-C) continues with `--resume`: the data stages are not
 * run again (their files keep their bytes), training goes on from the stopped step to the
 * budget, and the evaluation, report and summary follow. The stop falls among the checkpoints
 * the run averages (every 10 steps, the last five), and the averaged model must be the one a run
 * never stopped trains, bit for bit.
 */
const root = path.resolve(__dirname, '..', '..');
const out = tempDir('quickstart-resume');
const STEPS = 120;
const args = (...extra: string[]) => [
  path.join(root, 'bin', 'ndbg.js'), 'quickstart', '--out', out, '--programs', '80', '--eval-programs', '3', '--sessions', '1', '--cruxeval', 'none', '--mine-packages', 'none',
  '--steps', String(STEPS), '--set', 'train.checkpoint_every=10', '--set', 'train.eval_every=0', ...extra,
];
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const DATA_FILES = ['programs/train.jsonl', 'traces/train.jsonl', 'ndl/train.jsonl', 'mined/mined.jsonl', 'traces/mined-test.jsonl', 'data/manifest.json'];

/** After this many steps, inside the averaged window (steps 80–120). */
const STOP_AFTER = 95;

/** Starts the quickstart and sends SIGINT once training has logged STOP_AFTER steps. */
function quickstartUntilCtrlC(): Promise<Stopped> {
  return stopAfterSteps(args('--force'), { cwd: root, metrics: path.join(out, 'run', 'metrics.jsonl'), steps: STOP_AFTER, signal: 'SIGINT', giveUpMs: 8 * 60_000 });
}

const run = (extra: string[]) => spawnSync(process.execPath, args(...extra), { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20, timeout: 8 * 60_000 });

describe('ndbg quickstart --resume', () => {
  let stoppedAt = 0;
  let hashes: string[] = [];

  beforeAll(async () => {
    const stopped = await quickstartUntilCtrlC();
    expect({ code: stopped.code, internal: /internal error/.test(stopped.stderr) }).toEqual({ code: 130, internal: false });
    expect(stopped.stderr).toMatch(/quickstart stopped by signal in training at step \d+ .*continue it with the same command and --resume/);
    const steps = readMetrics(path.join(out, 'run', 'metrics.jsonl')).map((m) => m.step);
    stoppedAt = steps[steps.length - 1];
    hashes = DATA_FILES.map((f) => sha(path.join(out, f)));
  }, 10 * 60_000);

  test('stopped in training, before the budget and without a summary', () => {
    expect(stoppedAt).toBeGreaterThanOrEqual(STOP_AFTER);
    expect(stoppedAt).toBeLessThan(STEPS);
    expect(fs.existsSync(path.join(out, 'quickstart.json'))).toBe(false);
  });

  test('refuses options that would have made other data, and --force beside --resume, changing nothing', () => {
    const other = run(['--resume', '--docs-per-program', '3']);
    expect(other.status).toBe(2);
    expect(other.stderr).toMatch(/--resume: --docs-per-program 3 \(the data was made with 2\) per .*quickstart-data\.json/);
    expect(other.stderr).not.toMatch(/\n\s+at /);
    const both = run(['--resume', '--force']);
    expect(both.status).toBe(2);
    expect(both.stderr).toMatch(/--resume continues the quickstart in --out and --force replaces it/);
    expect(DATA_FILES.map((f) => sha(path.join(out, f)))).toEqual(hashes);
  });

  test('continues training from the stopped step on the same data, then evaluates and reports', () => {
    const resumed = run(['--resume']);
    expect({ status: resumed.status, stderr: resumed.status === 0 ? '' : resumed.stderr }).toEqual({ status: 0, stderr: '' });
    expect(resumed.stderr).toContain(`resuming from ${path.join(out, 'run', 'checkpoints', `step-${String(stoppedAt).padStart(8, '0')}`)} (step ${stoppedAt})`);
    expect(resumed.stderr).not.toMatch(/\[1\/9\] programs/);
    expect(DATA_FILES.map((f) => sha(path.join(out, f)))).toEqual(hashes);
    // Every step once, in order: the stopped run's steps, then the resumed ones.
    expect(readMetrics(path.join(out, 'run', 'metrics.jsonl')).map((m) => m.step)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'quickstart.json'), 'utf8')) as { steps: number; resumedAt: number; seconds: Record<string, number> };
    expect({ steps: summary.steps, resumedAt: summary.resumedAt }).toEqual({ steps: STEPS, resumedAt: stoppedAt });
    // The data stages' seconds are the recorded ones, and count in the total.
    expect(summary.seconds.programs).toBeGreaterThan(0);
    expect(summary.seconds.total).toBeGreaterThan(summary.seconds.programs + summary.seconds.train);
    expect(resumed.stdout).toMatch(new RegExp(`training: ${STEPS} steps \\(step budget, resumed at step ${stoppedAt}\\)`));
    for (const f of ['run/report.html', 'run/eval/next_state.json', 'debug-session.txt']) expect(fs.existsSync(path.join(out, f))).toBe(true);
  }, 10 * 60_000);

  test('averages the checkpoints a run never stopped would, into the same weights', () => {
    expect(averagedSteps(path.join(out, 'run', 'averaged'))).toEqual([80, 90, 100, 110, 120]);
    expect(listCheckpoints(path.join(out, 'run')).map((c) => c.step)).toEqual([80, 90, 100, 110, 120]);
    // The same run from step 0 in one go, from the run's own config record.
    const straight = path.join(out, 'straight');
    const r = spawnSync(process.execPath, [path.join(root, 'bin', 'ndbg.js'), 'train', '--config', path.join(out, 'run', 'config.json'), '--out', straight, '--quiet'], { cwd: root, encoding: 'utf8', timeout: 8 * 60_000 });
    expect({ status: r.status, stderr: r.status === 0 ? '' : r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(sha(path.join(out, 'run', 'averaged', 'model.safetensors'))).toBe(sha(path.join(straight, 'averaged', 'model.safetensors')));
  }, 10 * 60_000);
});

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { CELL_DECODING, type CellEval } from '../../src/scaling/cell_eval';
import { loadGrid } from '../../src/scaling/grid';
import { collectResults } from '../../src/scaling/sweep_dir';
import { traceInProcess } from '../../src/trace/inprocess';
import type { ProgramRecord } from '../../src/trace/types';
import { tempDir } from '../helpers/tmp';

/**
 * The next-state eval of a sweep's cells, in child processes (dist/ from test/global-setup.ts):
 * a 2-size × 1-budget grid of tiny models on sentencepiece data at T = 128 (the eval fixture's
 * prompts fit there), evaluated after the fact with --eval-only, then trained and evaluated in
 * one pass from a traces file; reruns skip what is recorded.
 */
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'bin', 'ndbg.js');
const programs = path.join(root, 'test/fixtures/eval/programs.jsonl');
const run = (args: string[]) => {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const ACTIONS = ['step_into', 'step_over', 'continue'];
const IDS = ['a-D2.05e3-s0', 'b-D2.05e3-s0'];

let tmp: string;

function writeGrid(file: string, nextStateEval?: Record<string, unknown>): void {
  fs.writeFileSync(
    file,
    JSON.stringify({
      name: 'tiny-eval',
      base_config: path.join(root, 'test/fixtures/train/tiny-run.json'),
      set: [`data.datasets=${JSON.stringify([path.join(tmp, 'data')])}`, 'data.seq_len=128', 'model.max_seq_len=128', 'model.vocab_size=2048'],
      sizes: [
        { name: 'a', model: { d_model: 8, n_heads: 1, d_ff: 16 } },
        { name: 'b', model: { d_model: 16, n_heads: 2, d_ff: 32 } },
      ],
      // 2 × 2 rows of 128 tokens a step: 4 steps.
      budgets: { kind: 'tokens', values: [2048] },
      lr_rule: { peak_lr: 0.01, reference_d_model: 16 },
      warmup_rule: { fraction: 0.25 },
      checkpoint_every: 2,
      eval_batches: 1,
      min_steps: 2,
      ...(nextStateEval ? { next_state_eval: nextStateEval } : {}),
    }),
  );
}

const record = (sweep: string, id: string) => JSON.parse(fs.readFileSync(path.join(sweep, 'cells', `${id}.json`), 'utf8')) as { status: string; next_state?: CellEval };

beforeAll(() => {
  tmp = tempDir('sweep-eval');
  const built = run([
    'data', 'build', '--source', `code=${path.join(root, 'test/fixtures/train/corpus.jsonl')}:code`,
    '--tokenizer', path.join(root, 'tokenizer/ndbg-2k.model'), '--seq-len', '128', '--val-fraction', '0.05', '--workers', '0', '--quiet', '--out', path.join(tmp, 'data'),
  ]);
  expect(built.stderr).toBe('');
});

test('the grid field: programs resolved against the grid file, the defaults of `ndbg eval next-state` filled in', () => {
  const file = path.join(tmp, 'defaults.json');
  writeGrid(file, { programs: path.relative(tmp, programs), actions: ['step_into', 'continue'] });
  expect(loadGrid(file).nextStateEval).toEqual({
    programs, per_program: 2, actions: ['step_into', 'continue'], seed: 0, max_new_tokens: 96, batch_size: 16, src_constraint: true, workers: 1,
  });
});

test('--eval-only evaluates trained cells after the fact, atomically into their records, and skips them on rerun', () => {
  const sweep = path.join(tmp, 'after');
  const plain = path.join(tmp, 'plain.json');
  writeGrid(plain);
  const trained = run(['sweep', plain, '--out', sweep, '--quiet']);
  expect(trained.code).toBe(0);
  expect(trained.stdout).toContain('2 trained, 0 already done, 0 failed of 2 cells →');
  expect(record(sweep, IDS[0]).next_state).toBeUndefined();
  // Nothing to evaluate with: one clear error.
  const none = run(['sweep', plain, '--out', sweep, '--eval-only']);
  expect(none.code).not.toBe(0);
  expect(none.stderr).toMatch(/--eval-only: .*plain\.json has no "next_state_eval" field/);

  const withEval = path.join(tmp, 'with-eval.json');
  writeGrid(withEval, { programs, per_program: 1, actions: ACTIONS, max_new_tokens: 48 });
  const metricsTime = fs.statSync(path.join(sweep, 'runs', IDS[0], 'metrics.jsonl')).mtimeMs;
  const ev = run(['sweep', withEval, '--out', sweep, '--eval-only', '--quiet']);
  expect(ev.code).toBe(0);
  expect(ev.stdout).toContain('(eval only): 2 evaluated, 0 already evaluated, 0 not trained yet of 2 cells');
  expect(fs.statSync(path.join(sweep, 'runs', IDS[0], 'metrics.jsonl')).mtimeMs).toBe(metricsTime); // no retraining
  for (const id of IDS) {
    const r = record(sweep, id);
    expect(r.status).toBe('done');
    const e = r.next_state!;
    expect(e.checkpoint).toBe(path.join('runs', id, 'checkpoints', 'step-00000004'));
    expect(e.step).toBe(4);
    expect(e.settings).toMatchObject({ per_program: 1, actions: ACTIONS, max_new_tokens: 48, max_programs: null, decoding: CELL_DECODING });
    expect(Object.keys(e.per_action)).toEqual(ACTIONS);
    expect(e.tasks).toBe(Object.values(e.per_action).reduce((a, x) => a + x.n, 0));
    expect(e.tasks).toBeGreaterThan(10);
    expect(e.programs).toBe(6); // every fixture program has a task that fits T = 128
    expect(e.overall.n).toBe(e.tasks);
    for (const row of [e.overall, ...Object.values(e.per_action)]) {
      for (const x of [row.model, row.baseline, ...row.model_ci]) expect(x).toBeGreaterThanOrEqual(0);
      for (const x of [row.model, row.baseline, ...row.model_ci]) expect(x).toBeLessThanOrEqual(1);
    }
    // The rule baseline, as the eval computes it: right on some step_into tasks, whatever the model.
    expect(e.per_action.step_into.baseline).toBeGreaterThan(0);
    // The full tables where `ndbg report RUN` looks for them.
    expect(fs.existsSync(path.join(sweep, 'runs', id, 'eval', 'next_state.json'))).toBe(true);
  }
  // Collected: results.json carries the evals.
  expect(collectResults(sweep).cells.every((c) => c.next_state?.tasks === record(sweep, c.id).next_state!.tasks)).toBe(true);

  // Rerun, either way: the recorded evals are kept as they are.
  const before = IDS.map((id) => fs.readFileSync(path.join(sweep, 'cells', `${id}.json`), 'utf8'));
  const again = run(['sweep', withEval, '--out', sweep, '--eval-only', '--quiet']);
  expect(again.stdout).toContain('0 evaluated, 2 already evaluated');
  const normal = run(['sweep', withEval, '--out', sweep, '--quiet']);
  expect(normal.code).toBe(0);
  expect(normal.stdout).toContain('0 trained, 2 already done, 0 failed of 2 cells; next-state eval: 0 evaluated, 2 already evaluated');
  expect(IDS.map((id) => fs.readFileSync(path.join(sweep, 'cells', `${id}.json`), 'utf8'))).toEqual(before);

  // An eval recorded without its decoding (before the frame grammar) is stale: evaluated again.
  const cellFile = path.join(sweep, 'cells', `${IDS[0]}.json`);
  const old = JSON.parse(fs.readFileSync(cellFile, 'utf8'));
  delete old.next_state.settings.decoding;
  fs.writeFileSync(cellFile, JSON.stringify(old));
  const undecoded = run(['sweep', withEval, '--out', sweep, '--eval-only', '--quiet']);
  expect(undecoded.stdout).toContain('1 evaluated, 1 already evaluated');
  expect(record(sweep, IDS[0]).next_state!.settings.decoding).toBe(CELL_DECODING);

  // Other settings make a recorded eval stale: evaluated again.
  writeGrid(withEval, { programs, per_program: 1, actions: ['step_into'], max_new_tokens: 48 });
  const changed = run(['sweep', withEval, '--out', sweep, '--eval-only', '--quiet']);
  expect(changed.stdout).toContain('2 evaluated, 0 already evaluated');
  expect(changed.stderr).toContain('next_state_eval changed since its eval; evaluating again');
  expect(Object.keys(record(sweep, IDS[0]).next_state!.per_action)).toEqual(['step_into']);
}, 240_000);

test('with next_state_eval in the grid, a sweep trains and evaluates each cell in one pass (from a traces file too)', () => {
  const traces = path.join(tmp, 'traces.jsonl');
  const records = fs.readFileSync(programs, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as ProgramRecord);
  fs.writeFileSync(traces, traceInProcess(records).map((t) => JSON.stringify(t)).join('\n') + '\n');
  const grid = path.join(tmp, 'traces-grid.json');
  writeGrid(grid, { programs: path.basename(traces), per_program: 1, actions: ACTIONS, max_new_tokens: 48, max_programs: 4 });
  const sweep = path.join(tmp, 'one-pass');
  const r = run(['sweep', grid, '--out', sweep, '--quiet']);
  expect(r.code).toBe(0);
  expect(r.stdout).toContain('2 trained, 0 already done, 0 failed of 2 cells; next-state eval: 2 evaluated, 0 already evaluated');
  for (const id of IDS) {
    const e = record(sweep, id).next_state!;
    expect(e.programs).toBe(4);
    expect(e.settings.max_programs).toBe(4);
    expect(e.programs_file).toBe(traces);
  }
}, 240_000);

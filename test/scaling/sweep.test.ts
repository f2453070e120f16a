import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { loadGrid } from '../../src/scaling/grid';
import { partitionCells } from '../../src/scaling/partition';
import { collectResults } from '../../src/scaling/sweep_dir';
import { readMetrics } from '../../src/train/metrics';
import { latestCheckpoint } from '../../src/train/checkpoint_dir';
import { tempDir } from '../helpers/tmp';

/**
 * `ndbg sweep` in child processes (dist/ is built by test/global-setup.ts): a 2-size × 2-budget
 * grid of tiny models on the byte-tokenized fixture corpus, killed inside its second cell and
 * rerun; then split into shards, collected, fitted and reported.
 */
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'bin', 'ndbg.js');
const run = (args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
};

let tmp: string;
let gridFile: string;

function writeGrid(file: string, over: Record<string, unknown> = {}): void {
  fs.writeFileSync(
    file,
    JSON.stringify({
      name: 'tiny',
      base_config: path.join(root, 'test/fixtures/train/tiny-run.json'),
      set: [`data.datasets=${JSON.stringify([path.join(tmp, 'data')])}`, 'train.log_every=1'],
      sizes: [
        { name: 'a', model: { d_model: 8, n_heads: 1, d_ff: 16 } },
        { name: 'b', model: { d_model: 16, n_heads: 2, d_ff: 32 } },
      ],
      // 64 tokens a step: 4 and 8 steps.
      budgets: { kind: 'tokens', values: [256, 512] },
      seeds: [0],
      lr_rule: { peak_lr: 0.01, reference_d_model: 16, exponent: 0.5 },
      warmup_rule: { fraction: 0.25, min_steps: 1 },
      checkpoint_every: 3,
      eval_batches: 2,
      min_steps: 2,
      ...over,
    }),
  );
}

beforeAll(() => {
  tmp = tempDir('sweep');
  const built = run([
    'data', 'build', '--source', `code=${path.join(root, 'test/fixtures/train/corpus.jsonl')}:code`,
    '--tokenizer', 'byte', '--seq-len', '32', '--val-fraction', '0.05', '--workers', '0', '--quiet', '--out', path.join(tmp, 'data'),
  ]);
  expect(built.stderr).toBe('');
  gridFile = path.join(tmp, 'grid.json');
  writeGrid(gridFile);
});

describe('the grid', () => {
  test('cells: sizes × budgets × seeds, with steps from the budget and the LR and warmup rules', () => {
    const { cells } = loadGrid(gridFile);
    expect(cells.map((c) => [c.id, c.steps, c.warmupSteps])).toEqual([
      ['a-D2.56e2-s0', 4, 1],
      ['a-D5.12e2-s0', 8, 2],
      ['b-D2.56e2-s0', 4, 1],
      ['b-D5.12e2-s0', 8, 2],
    ]);
    // peak_lr · (16 / d)^0.5
    expect(cells[0].peakLr).toBeCloseTo(0.01 * Math.SQRT2, 12);
    expect(cells[2].peakLr).toBeCloseTo(0.01, 12);
    expect(cells[0].config.optim.schedule).toEqual({ kind: 'cosine', peak_lr: cells[0].peakLr, warmup_steps: 1, min_lr: cells[0].peakLr * 0.1 });
    expect(cells[3].flops).toBe(512 * cells[3].trainFlopsPerToken);
  });

  test('a bad grid is one clear error naming the file and the field', () => {
    const bad = path.join(tmp, 'bad.json');
    writeGrid(bad, { budgets: { kind: 'tokens', values: [64] } });
    expect(() => loadGrid(bad)).toThrow(/bad\.json:\n {2}budgets\.values: 64 tokens gives size "a" only 1 steps/);
    writeGrid(bad, { sizes: [{ name: 'a b', model: {} }] });
    expect(() => loadGrid(bad)).toThrow(/sizes\.0\.name/);
    writeGrid(bad, { sizes: [{ name: 'a', model: { d_model: 12, n_heads: 5 } }] });
    expect(() => loadGrid(bad)).toThrow(/cell a-D2.56e2-s0/);
    const r = run(['sweep', bad, '--out', path.join(tmp, 'bad-out')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  test('next_state_eval: a bad field is one message naming the grid file and the field', () => {
    const programs = path.join(root, 'test/fixtures/eval/programs.jsonl');
    const bad = path.join(tmp, 'eval-bad.json');
    const cases: Array<[unknown, RegExp]> = [
      [{ programs, per_program: 0 }, /eval-bad\.json:\n {2}next_state_eval\.per_program: /],
      [{ programs, tasks: 5 }, /eval-bad\.json:\n {2}next_state_eval: Unrecognized key\(s\) in object: 'tasks'/],
      [{ programs, actions: ['step_sideways'] }, /eval-bad\.json:\n {2}next_state_eval\.actions/],
      [{ per_program: 1 }, /eval-bad\.json:\n {2}next_state_eval\.programs: Required/],
      [{ programs: 'nope.jsonl' }, /eval-bad\.json:\n {2}next_state_eval\.programs: .*nope\.jsonl is not a file/],
      // This grid's data is byte-tokenized: refused before anything trains, not after the first cell.
      [{ programs }, /eval-bad\.json:\n {2}next_state_eval: cell a-D2\.56e2-s0 trains on byte-tokenized data/],
    ];
    for (const [field, message] of cases) {
      writeGrid(bad, { next_state_eval: field });
      expect(() => loadGrid(bad)).toThrow(message);
    }
    expect(loadGrid(gridFile).nextStateEval).toBeUndefined();
  });

  test('shards partition the cells: each exactly once, loads balanced', () => {
    const cells = Array.from({ length: 23 }, (_, i) => ({ id: `c${i}`, flops: ((i * 7919) % 13) + 1 }));
    for (const n of [1, 2, 3, 5, 23, 30]) {
      const parts = partitionCells(cells, n);
      expect(parts.length).toBe(n);
      const ids = parts.flat().map((c) => c.id).sort();
      expect(ids).toEqual(cells.map((c) => c.id).sort());
      const loads = parts.map((p) => p.reduce((a, c) => a + c.flops, 0));
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(13);
      expect(partitionCells(cells, n)).toEqual(parts); // every task computes the same split
    }
  });
});

describe('ndbg sweep (child processes)', () => {
  const metrics = (sweep: string, id: string) => readMetrics(path.join(sweep, 'runs', id, 'metrics.jsonl')).map((r) => [r.step, r.loss, r.val_loss]);
  const weights = (sweep: string, id: string) => fs.readFileSync(path.join(latestCheckpoint(path.join(sweep, 'runs', id))!.dir, 'model.safetensors'));

  test('killed in a cell and rerun: finished cells are skipped, the interrupted one resumes exactly', () => {
    const ref = path.join(tmp, 'ref');
    const r0 = run(['sweep', gridFile, '--out', ref, '--quiet']);
    expect(r0.stderr).not.toMatch(/error/i);
    expect(r0.code).toBe(0);
    expect(r0.stdout).toContain('4 trained, 0 already done, 0 failed of 4 cells');

    const killed = path.join(tmp, 'killed');
    // Cell 1 has 4 steps and finishes; cell 2 (8 steps) dies right after step 5, before a checkpoint (they are every 3).
    const k = run(['sweep', gridFile, '--out', killed, '--quiet'], { NDBG_FAULT_AFTER_STEP: '5' });
    expect(k.signal).toBe('SIGKILL');
    const mid = collectResults(killed);
    expect(mid.cells.map((c) => c.status)).toEqual(['done', 'running', 'pending', 'pending']);
    expect(latestCheckpoint(path.join(killed, 'runs', 'a-D5.12e2-s0'))!.step).toBe(3);
    const firstDone = fs.statSync(path.join(killed, 'runs', 'a-D2.56e2-s0', 'metrics.jsonl')).mtimeMs;

    const again = run(['sweep', gridFile, '--out', killed, '--quiet']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('3 trained, 1 already done');
    expect(again.stderr).toContain('resuming from');
    expect(fs.statSync(path.join(killed, 'runs', 'a-D2.56e2-s0', 'metrics.jsonl')).mtimeMs).toBe(firstDone);
    for (const id of ['a-D2.56e2-s0', 'a-D5.12e2-s0', 'b-D2.56e2-s0', 'b-D5.12e2-s0']) {
      expect(metrics(killed, id)).toEqual(metrics(ref, id));
      expect(weights(killed, id).equals(weights(ref, id))).toBe(true);
    }
    const res = collectResults(killed).cells.find((c) => c.id === 'a-D5.12e2-s0')!.result!;
    // tokens: the trainer's count of target tokens (a row's masked positions do not count), so a little under 8 × 64.
    expect(res.steps).toBe(8);
    expect(res.tokens).toBeGreaterThan(0.9 * 512);
    expect(res.tokens).toBeLessThanOrEqual(512);
    expect(res.val_loss).toEqual(expect.any(Number));
    expect(res.flops).toBe(res.tokens * collectResults(killed).cells[1].train_flops_per_token);
    // A third run has nothing to do.
    expect(run(['sweep', gridFile, '--out', killed, '--quiet']).stdout).toContain('0 trained, 4 already done');
  });

  test('two shards train disjoint halves; --collect gathers; a changed cell config is refused', () => {
    const sweep = path.join(tmp, 'sharded');
    const s0 = run(['sweep', gridFile, '--out', sweep, '--shard', '0/2', '--quiet']);
    expect(s0.code).toBe(0);
    const [mine0, mine1] = partitionCells(loadGrid(gridFile).cells, 2).map((p) => p.map((c) => c.id));
    const half = collectResults(sweep);
    expect(half.cells.filter((c) => c.status === 'done').map((c) => c.id)).toEqual(mine0);
    const s1 = run(['sweep', gridFile, '--out', sweep, '--shard', 'auto', '--quiet'], { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_COUNT: '2' });
    expect(s1.code).toBe(0);
    expect(s1.stdout).toContain(`sweep shard 1/2: ${mine1.length} trained, 0 already done, 0 failed of ${mine1.length} cells`);
    const c = run(['sweep', gridFile, '--out', sweep, '--collect']);
    expect(c.code).toBe(0);
    expect(c.stdout).toContain('4/4 done');
    expect(JSON.parse(fs.readFileSync(path.join(sweep, 'results.json'), 'utf8')).counts.done).toBe(4);
    // Same results as the unsharded reference: cells do not depend on who trained them.
    for (const id of ['a-D2.56e2-s0', 'b-D5.12e2-s0']) expect(metrics(sweep, id)).toEqual(metrics(path.join(tmp, 'ref'), id));
    const changed = path.join(tmp, 'changed.json');
    writeGrid(changed, { lr_rule: { peak_lr: 0.02, reference_d_model: 16, exponent: 0.5 } });
    const r = run(['sweep', changed, '--out', sweep, '--quiet']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/cell a-D2.56e2-s0: its run config differs from .*configs\/a-D2.56e2-s0\.json/);
  });

  test('scaling fit on the sweep writes scaling.json and a report page with the plots', () => {
    const sweep = path.join(tmp, 'ref');
    const out = path.join(tmp, 'fit');
    // 4 cells are too few for 5 parameters: a clear refusal.
    const few = run(['scaling', 'fit', sweep, '--out', out, '--bootstrap', '5']);
    expect(few.code).not.toBe(0);
    expect(few.stderr).toMatch(/4 finished cells over 2 sizes; the law needs at least 6 cells/);
  });
});

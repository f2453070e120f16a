import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { loadModelFromCheckpoint } from '../../src/model/checkpoint';
import { averagedSteps } from '../../src/train/average';
import { initBackend } from '../../src/backend/backend';
import { parseDocument } from '../../src/ndl/parse';
import { MixtureLoader } from '../../src/data/loader';
import { readManifest } from '../../src/data/manifest';
import { readJsonlSync } from '../../src/util/jsonl';
import { MINED_FRACTIONS } from '../../src/cli/quickstart_mine';
import { splitRecords } from '../../src/programs/splits';
import { tempDir } from '../helpers/tmp';

/**
 * The main job end to end, shortened: the real `ndbg quickstart` CLI on a small program count
 * and 200 training steps. Every artifact must exist and load back, and the loss must fall.
 */
const root = path.resolve(__dirname, '..', '..');
const out = tempDir('quickstart');

function lines(file: string): unknown[] {
  return readJsonlSync(file);
}

describe('ndbg quickstart (shortened)', () => {
  let stdout = '';
  beforeAll(() => {
    stdout = execFileSync(
      process.execPath,
      // A step budget (the quickstart's default kind; 200 steps here), so the loss curve, and the
      // 'loss fell by 0.5' check, are the same on a fast or a slow machine.
      // --mined-share 0.1: the mined functions' documents are trained on too (the default only evaluates on them).
      [path.join(root, 'bin', 'ndbg.js'), 'quickstart', '--out', out, '--force', '--programs', '150', '--eval-programs', '6', '--free-src', '--cruxeval-programs', '4',
        '--mined-share', '0.1', '--steps', '200', '--set', 'train.eval_every=50', '--set', 'train.checkpoint_every=100'],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, timeout: 15 * 60 * 1000 },
    ).toString();
  }, 16 * 60 * 1000);

  it('reports where everything went and the loss fell', () => {
    expect(stdout).toMatch(/quickstart finished/);
    const summary = JSON.parse(fs.readFileSync(path.join(out, 'quickstart.json'), 'utf8')) as { firstLoss: number; lastLoss: number; steps: number; tokens: number; ndlEpochs: number; budget: unknown; machine: { cores: number; isa: string } };
    expect(summary.lastLoss).toBeLessThan(summary.firstLoss - 0.5);
    // The budget kind and the machine are recorded beside the figures.
    expect(summary.budget).toEqual({ kind: 'steps', steps: 200 });
    expect(summary.steps).toBe(200);
    expect(summary.machine.cores).toBeGreaterThan(0);
    expect(stdout).toMatch(/training: 200 steps \(step budget\), \d+ tokens\/s on .+ cores?\)/);
    // How often training read the NDL documents: the NDL share (0.9) of the tokens read over the NDL training tokens.
    const ndlTokens = (JSON.parse(fs.readFileSync(path.join(out, 'data', 'manifest.json'), 'utf8')) as { sources: Array<{ name: string; train: { tokens: number } }> }).sources.find((x) => x.name === 'ndl')!.train.tokens;
    expect(summary.ndlEpochs).toBeCloseTo((0.9 * summary.tokens) / ndlTokens, 6);
    const metrics = lines(path.join(out, 'run', 'metrics.jsonl')) as Array<{ step: number; loss: number }>;
    expect(metrics.length).toBeGreaterThan(20);
  });

  it('writes programs, traces and NDL documents that read back', () => {
    for (const split of ['train', 'validation', 'test']) expect(fs.existsSync(path.join(out, 'programs', `${split}.jsonl`))).toBe(true);
    const traces = lines(path.join(out, 'traces', 'train.jsonl')) as Array<{ status: string; events: unknown[] }>;
    expect(traces.length).toBeGreaterThan(100);
    expect(traces.every((t) => t.events.length > 0)).toBe(true);
    const docs = lines(path.join(out, 'ndl', 'train.jsonl')) as Array<{ text: string }>;
    expect(docs.length).toBeGreaterThan(300);
    for (const d of docs.slice(0, 50)) expect(parseDocument(d.text).error).toBeUndefined();
  });

  it('mines real functions from the standard library and the pinned packages, split by function', async () => {
    const mined = lines(path.join(out, 'mined', 'mined.jsonl')) as Array<{ id: string; code: string; input: string; entry: string; source: { package: string; version: string | null } }>;
    const manifest = JSON.parse(fs.readFileSync(path.join(out, 'mined', 'mined.jsonl.manifest.json'), 'utf8')) as { python: string; against: string; packages: Array<{ package: string }>; functionsKept: number; only_splits: { splits: string[] } };
    // The standard library and the pinned list (configs/mine-packages-quickstart.txt), installed with pip.
    const packages = new Set(mined.map((r) => r.source.package));
    expect(packages.has('python-stdlib')).toBe(true);
    expect(packages.has('more-itertools')).toBe(true);
    expect(mined.find((r) => r.source.package === 'more-itertools')?.source.version).toMatch(/^\d+\./);
    expect(manifest.functionsKept).toBeGreaterThan(1000);
    expect(manifest.python).toMatch(/^3\.\d+\.\d+$/);
    expect(manifest.against).toMatch(/evalsets\/cruxeval\.jsonl$/);
    const docs = lines(path.join(out, 'ndl', 'mined.jsonl')) as Array<{ text: string }>;
    expect(docs.length).toBeGreaterThan(1000);
    for (const d of docs.slice(0, 50)) expect(parseDocument(d.text).error).toBeUndefined();
    // The held-out functions are the test split's, split by function: none is a training program.
    const split = await splitRecords(mined.map(({ source: _source, ...r }) => r), MINED_FRACTIONS);
    const heldOut = lines(path.join(out, 'traces', 'mined-test.jsonl')) as Array<{ code: string; events: unknown[] }>;
    expect(heldOut).toHaveLength(6);
    // Only the splits the run uses are mined: the train split it trains on and the test split it evaluates on.
    expect(manifest.only_splits.splits).toEqual(['train', 'test']);
    expect(split.records.validation).toHaveLength(0);
    const trainCodes = new Set(split.records.train.map((r) => r.code));
    const testCodes = new Set(split.records.test.map((r) => r.code));
    for (const t of heldOut) expect({ train: trainCodes.has(t.code), test: testCodes.has(t.code) }).toEqual({ train: false, test: true });
  });

  it('builds Arrow data that the loader streams', () => {
    const dataDir = path.join(out, 'data');
    const manifest = readManifest(dataDir);
    expect(manifest.sources.map((s: { name: string }) => s.name).sort()).toEqual(['code', 'mined', 'ndl']);
    // Every NDL row shows its program, generated or mined: documents are packed whole, none cut across rows.
    for (const name of ['ndl', 'mined']) expect(manifest.sources.find((s) => s.name === name)?.packing).toMatchObject({ mode: 'whole_documents', documentsSplit: 0 });
    expect(manifest.sources.find((s) => s.name === 'code')?.packing?.mode).toBe('stream');
    // The mined share is taken from the code source's: 0.9 / 0 / 0.1, as the run's config records.
    const config = JSON.parse(fs.readFileSync(path.join(out, 'run', 'config.json'), 'utf8')) as { data: { weights: Record<string, number> } };
    expect(config.data.weights).toEqual({ ndl: 0.9, mined: 0.1 });
    const loader = new MixtureLoader({ datasets: [dataDir], batchSize: 2, seed: 0 });
    const batch = loader.next();
    expect(batch.ids.length).toBe(2 * (loader.seqLen + 1));
  });

  it('writes a checkpoint that reloads, the evaluation with its baseline, the report and the debug transcript', async () => {
    await initBackend('wasm', () => undefined);
    const ckpts = fs.readdirSync(path.join(out, 'run', 'checkpoints')).filter((d) => d.startsWith('step-'));
    expect(ckpts.length).toBeGreaterThan(0);
    const { model } = loadModelFromCheckpoint(path.join(out, 'run', 'checkpoints', ckpts.sort().pop() as string));
    expect(model.config.vocab_size).toBeGreaterThan(0);
    model.dispose();
    // The recipe's averaged checkpoint (train.average_last 5; 2 checkpoints in this short run) is the one evaluated.
    const evaluated = (JSON.parse(fs.readFileSync(path.join(out, 'quickstart.json'), 'utf8')) as { checkpoint: string }).checkpoint;
    expect(evaluated).toBe(path.join(out, 'run', 'averaged'));
    expect(averagedSteps(evaluated)).toEqual([100, 200]);
    expect(stdout).toContain('(the mean weights of steps 100, 200)');
    loadModelFromCheckpoint(evaluated).model.dispose();
    const ns = JSON.parse(fs.readFileSync(path.join(out, 'run', 'eval', 'next_state.json'), 'utf8')) as {
      full_match_model: Record<string, number>;
      full_match_baseline: Record<string, number>;
    };
    expect(Object.keys(ns.full_match_model)).toEqual(expect.arrayContaining(['step_into', 'step_over', 'inv_step_call', 'all']));
    expect(Object.keys(ns.full_match_baseline)).toContain('step_into');
    // The model as shipped (SRC constrained to the program's lines) and decoding freely, side by side.
    const tables = (ns as unknown as { tables: Record<string, Record<string, { n: number }>> }).tables;
    expect(Object.keys(tables).sort()).toEqual(['baseline', 'model', 'model_free_src', 'naive']);
    // Per-task samples beside the JSON; multi-step sessions; real code (the shipped CruxEval copy) by default.
    const samples = lines(path.join(out, 'run', 'eval', 'next_state_samples.jsonl')) as Array<{ program: string; predictions: Record<string, unknown> }>;
    expect(samples).toHaveLength(tables.model.all.n);
    expect(Object.keys(samples[0].predictions).sort()).toEqual(['baseline', 'model', 'model_free_src', 'naive']);
    const sessions = JSON.parse(fs.readFileSync(path.join(out, 'run', 'eval', 'sessions.json'), 'utf8'));
    expect(sessions.stops).toBeGreaterThanOrEqual(sessions.right);
    expect(tables.model_free_src.all.n).toBe(tables.model.all.n);
    const crux = JSON.parse(fs.readFileSync(path.join(out, 'run', 'eval', 'cruxeval.json'), 'utf8'));
    expect(crux.programs).toBe(4);
    expect(Object.keys(crux.byTask).sort()).toEqual(['input_inv_step_call', 'output_breakpoint', 'output_step_return']);
    const cruxNext = JSON.parse(fs.readFileSync(path.join(out, 'run', 'eval', 'next_state_cruxeval.json'), 'utf8'));
    expect(Object.keys(cruxNext.full_match_baseline)).toContain('step_into');
    expect(stdout).toMatch(/CruxEval next-state \(4 programs\)/);
    // The held-out mined functions: their own next-state section, in the JSON, the summary and quickstart.json.
    const minedNext = JSON.parse(fs.readFileSync(path.join(out, 'run', 'eval', 'next_state_mined.json'), 'utf8'));
    expect(minedNext.programs).toBe(6);
    expect(Object.keys(minedNext.full_match_baseline)).toContain('step_return');
    expect(lines(path.join(out, 'run', 'eval', 'next_state_mined_samples.jsonl')).length).toBe(minedNext.tasks);
    expect(stdout).toMatch(/mined real functions, next-state \(6 held-out functions\): model +\d+\.\d%/);
    const summaryJson = JSON.parse(fs.readFileSync(path.join(out, 'quickstart.json'), 'utf8'));
    expect(summaryJson.mined.programs).toBe(6);
    expect(Object.keys(summaryJson.full_match_model_free_src)).toContain('step_into');
    // Tasks whose prompt cannot fit the context are counted, per action, never scored or hidden.
    expect((ns as unknown as { did_not_fit: Record<string, number> }).did_not_fit).toEqual(expect.objectContaining({ all: expect.any(Number) }));
    // The held-out programs' own documents, and the copy measures read from them.
    const heldOut = lines(path.join(out, 'ndl', 'test.jsonl')) as Array<{ text: string }>;
    expect(heldOut.length).toBeGreaterThanOrEqual(6);
    const probe = JSON.parse(fs.readFileSync(path.join(out, 'run', 'eval', 'copy_probe.json'), 'utf8'));
    expect(probe.repeatAccuracy).toBeGreaterThanOrEqual(0);
    expect(probe.srcTokens).toMatchObject({ documents: heldOut.length, tooLong: 0 });
    expect(probe.srcTokens.spans).toBeGreaterThanOrEqual(heldOut.length);
    for (const k of ['firstToken', 'restTokens', 'spanExact']) expect(probe.srcTokens[k]).toBeGreaterThanOrEqual(0);
    const html = fs.readFileSync(path.join(out, 'run', 'report.html'), 'utf8');
    expect(html).toMatch(/<svg/);
    expect(html).toMatch(/Next-state accuracy/);
    expect(html).toMatch(/did_not_fit/);
    const transcript = fs.readFileSync(path.join(out, 'debug-session.txt'), 'utf8');
    expect(transcript).toMatch(/\(ndbg\) s/);
    expect(transcript).toMatch(/def count\(s, t\)/);
  });
});

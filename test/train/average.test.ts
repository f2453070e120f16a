import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadModelFromCheckpoint, readCheckpointWeights } from '../../src/model/checkpoint';
import type { TensorMap } from '../../src/model/safetensors';
import { AVERAGED_DIR, averagedSteps, averageWeights } from '../../src/train/average';
import { checkpointName, checkpointsRoot, listCheckpoints } from '../../src/train/checkpoint_dir';
import { trainFromConfig } from '../../src/train/run';
import { buildFixtureCorpus } from './fixture_data';

/**
 * train.average_last: a run's averaged checkpoint is the element-wise mean of its newest
 * checkpoints, loads as a model, and leaves the run's own checkpoints as they were.
 * Model: test/fixtures/train/tiny-run.json on the fixture corpus packed with the byte tokenizer.
 */
const root = path.resolve(__dirname, '../..');
const config = path.join(root, 'test/fixtures/train/tiny-run.json');
let tmp: string;
let dataSet: string;

const train = (runDir: string, overrides: string[], resume = false) =>
  trainFromConfig({ config, overrides: [`data.datasets=${JSON.stringify([dataSet])}`, ...overrides], runDir, resume, quiet: true, log: () => undefined });
const weightsAt = (run: string, step: number) => readCheckpointWeights(path.join(checkpointsRoot(run), checkpointName(step)));
const tensor = (data: number[], shape = [data.length]) => ({ shape, data: Float32Array.from(data) });

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-average-'));
  dataSet = path.join(tmp, 'data');
  buildFixtureCorpus(dataSet);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('averageWeights', () => {
  test('is the element-wise mean of each tensor', () => {
    const maps: TensorMap[] = [
      new Map([['w', tensor([1, 2, 3, 4], [2, 2])], ['b', tensor([0.5])]]),
      new Map([['w', tensor([3, 2, 1, 0], [2, 2])], ['b', tensor([1.5])]]),
      new Map([['w', tensor([2, 5, 2, 2], [2, 2])], ['b', tensor([-0.5])]]),
    ];
    const mean = averageWeights(maps);
    expect(Array.from(mean.get('w')!.data)).toEqual([2, 3, 2, 2]);
    expect(mean.get('w')!.shape).toEqual([2, 2]);
    expect(Array.from(mean.get('b')!.data)).toEqual([0.5]);
  });

  test('refuses weights whose names or shapes differ', () => {
    const a: TensorMap = new Map([['w', tensor([1, 2])]]);
    expect(() => averageWeights([a, new Map([['w', tensor([1, 2], [1, 2])]])])).toThrow(/shape/);
    expect(() => averageWeights([a, new Map([['v', tensor([1, 2])]])])).toThrow(/lack w/);
    expect(() => averageWeights([a, new Map([['w', tensor([1, 2])], ['v', tensor([1])]])])).toThrow(/2 tensors/);
  });
});

describe('train.average_last', () => {
  test('writes RUN/averaged, the mean of the newest checkpoints, which loads as a model', async () => {
    const run = path.join(tmp, 'avg');
    const s = await train(run, ['train.steps=6', 'train.checkpoint_every=2', 'train.keep_last=1', 'train.average_last=3']);
    expect(s.averaged).toEqual({ dir: path.join(run, AVERAGED_DIR), steps: [2, 4, 6] });
    // The newest three are kept whatever keep_last says.
    expect(listCheckpoints(run).map((c) => c.step)).toEqual([2, 4, 6]);
    const parts = [2, 4, 6].map((step) => weightsAt(run, step));
    const averaged = readCheckpointWeights(s.averaged!.dir);
    let moved = 0;
    for (const [name, t] of averaged) {
      const want = Float32Array.from(t.data, (_, i) => (parts[0].get(name)!.data[i] + parts[1].get(name)!.data[i] + parts[2].get(name)!.data[i]) / 3);
      for (let i = 0; i < want.length; i++) expect(Math.abs(t.data[i] - want[i])).toBeLessThanOrEqual(1e-6 * Math.max(1, Math.abs(want[i])));
      moved = Math.max(moved, ...Array.from(t.data, (x, i) => Math.abs(x - parts[2].get(name)!.data[i])));
    }
    expect(moved).toBeGreaterThan(0);
    expect(averagedSteps(s.averaged!.dir)).toEqual([2, 4, 6]);
    expect(averagedSteps(path.join(checkpointsRoot(run), checkpointName(6)))).toBeUndefined();
    // It keeps the run's recorded context and model config.
    const loaded = loadModelFromCheckpoint(s.averaged!.dir);
    const last = loadModelFromCheckpoint(path.join(checkpointsRoot(run), checkpointName(6)));
    expect({ seqLen: loaded.seqLen, config: loaded.config }).toEqual({ seqLen: last.seqLen, config: last.config });
    loaded.model.dispose();
    last.model.dispose();
  });

  test('changes no training step: the checkpoints equal those of a run without it', async () => {
    const plain = path.join(tmp, 'plain');
    const s = await train(plain, ['train.steps=6', 'train.checkpoint_every=2', 'train.keep_last=3']);
    expect(s.averaged).toBeUndefined();
    expect(fs.existsSync(path.join(plain, AVERAGED_DIR))).toBe(false);
    for (const step of [2, 4, 6]) {
      const a = weightsAt(plain, step);
      const b = weightsAt(path.join(tmp, 'avg'), step);
      for (const [name, t] of a) expect(Buffer.from(b.get(name)!.data.buffer).equals(Buffer.from(t.data.buffer))).toBe(true);
    }
  });
});

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { exportHfCommand } from '../../src/cli/commands/export-hf';
import { readSafetensors } from '../../src/model/safetensors';
import { checkpointName, checkpointsRoot } from '../../src/train/checkpoint_dir';
import { readMetrics } from '../../src/train/metrics';
import { trainFromConfig } from '../../src/train/run';
import { crc32c, encodeEvent, maskedCrc32c, tfRecordFrame, writeEvalScalars } from '../../src/train/tensorboard';
import { UserError } from '../../src/util/errors';
import { peerPython } from '../helpers/peer-python';
import { buildFixtureCorpus } from './fixture_data';

/**
 * train.tensorboard (event files read back by TensorBoard's own EventAccumulator) and
 * train.init_from (a new run from a checkpoint, a run directory or a Hugging Face directory).
 * Model: test/fixtures/train/tiny-run.json on the fixture corpus packed with the byte tokenizer.
 */
const root = path.resolve(__dirname, '../..');
const config = path.join(root, 'test/fixtures/train/tiny-run.json');
let tmp: string;
let dataSet: string;
let runA: string;

const base = (steps: number) => [`data.datasets=${JSON.stringify([dataSet])}`, `train.steps=${steps}`];
const train = (runDir: string, overrides: string[]) => trainFromConfig({ config, overrides, runDir, resume: false, quiet: true, log: () => undefined });
const weightsAt = (run: string, step: number) => readSafetensors(path.join(checkpointsRoot(run), checkpointName(step), 'model.safetensors')).tensors;

function maxWeightDiff(a: Map<string, { data: Float32Array }>, b: Map<string, { data: Float32Array }>): number {
  let d = 0;
  for (const [k, t] of a) {
    const u = b.get(k)!.data;
    for (let i = 0; i < t.data.length; i++) d = Math.max(d, Math.abs(t.data[i] - u[i]));
  }
  return d;
}

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-initfrom-'));
  dataSet = path.join(tmp, 'data');
  buildFixtureCorpus(dataSet);
  runA = path.join(tmp, 'a');
  await train(runA, [...base(6), 'train.tensorboard=true', 'train.eval_every=3']);
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('TensorBoard event files', () => {
  test('CRC-32C and the record framing follow the TFRecord format', () => {
    // RFC 3720 test vector: 32 bytes of zeros → 0x8a9136aa; "123456789" → 0xe3069283.
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    const data = encodeEvent({ wallTime: 1, step: 3, scalars: { a: 1 } });
    const frame = tfRecordFrame(data);
    expect(Number(frame.readBigUInt64LE(0))).toBe(data.length);
    expect(frame.readUInt32LE(8)).toBe(maskedCrc32c(frame.subarray(0, 8)));
    expect(frame.readUInt32LE(12 + data.length)).toBe(maskedCrc32c(data));
  });

  test("a short training run's scalars are read back by TensorBoard's EventAccumulator", () => {
    const files = fs.readdirSync(runA).filter((f) => f.startsWith('events.out.tfevents.'));
    expect(files).toHaveLength(1);
    // Evaluation results of a checkpoint land in the run's event files at the checkpoint's step.
    const evalFile = writeEvalScalars(path.join(checkpointsRoot(runA), checkpointName(6)), 'next_state', {
      predictor: 'model',
      tables: { model: { all: { full: 0.25, src: 0.5 } } },
    });
    expect(evalFile).toBeDefined();
    const peer = peerPython(['tensorboard']);
    if ('skip' in peer) {
      process.stderr.write(`skipped: ${peer.skip}\n`);
      return;
    }
    const script = [
      'import json, sys',
      'from tensorboard.backend.event_processing.event_accumulator import EventAccumulator',
      'acc = EventAccumulator(sys.argv[1]); acc.Reload()',
      'tags = acc.Tags()["scalars"]',
      'print(json.dumps({t: [[e.step, e.value] for e in acc.Scalars(t)] for t in tags}))',
    ].join('\n');
    const r = spawnSync(peer.python, ['-c', script, runA], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const scalars = JSON.parse(r.stdout) as Record<string, [number, number][]>;
    expect(Object.keys(scalars).sort()).toEqual([
      'eval/next_state/tables/model/all/full',
      'eval/next_state/tables/model/all/src',
      'train/grad_norm',
      'train/loss',
      'train/lr',
      'train/tokens_per_s',
      'val/loss',
    ]);
    expect(scalars['eval/next_state/tables/model/all/full']).toEqual([[6, 0.25]]);
    const m = readMetrics(path.join(runA, 'metrics.jsonl'));
    const f32 = (x: number) => Math.fround(x);
    expect(scalars['train/loss']).toEqual(m.map((x) => [x.step, f32(x.loss)]));
    expect(scalars['train/lr']).toEqual(m.map((x) => [x.step, f32(x.lr)]));
    expect(scalars['train/grad_norm']).toEqual(m.map((x) => [x.step, f32(x.grad_norm)]));
    expect(scalars['train/tokens_per_s']).toEqual(m.map((x) => [x.step, f32(x.tokens_per_s)]));
    expect(scalars['val/loss']).toEqual(m.filter((x) => x.val_loss !== undefined).map((x) => [x.step, f32(x.val_loss!)]));
    expect(scalars['val/loss'].map((s) => s[0])).toEqual([3, 6]);
  });

  test('off by default: no event file', async () => {
    const run = path.join(tmp, 'no-tb');
    await train(run, base(2));
    expect(fs.readdirSync(run).some((f) => f.includes('tfevents'))).toBe(false);
    expect(writeEvalScalars(path.join(checkpointsRoot(run), checkpointName(2)), 'next_state', { a: 1 })).toBeUndefined();
  });
});

describe('train.init_from', () => {
  // A learning rate of ~0 keeps the weights where init_from put them, so they can be compared.
  const frozen = ['optim.schedule={"kind":"constant","peak_lr":1e-12,"warmup_steps":0}', 'optim.weight_decay=0'];

  test.each([
    ['a checkpoint directory', () => path.join(checkpointsRoot(runA), checkpointName(6)), 'checkpoint', 6],
    ['a run directory (its latest checkpoint)', () => runA, 'checkpoint', 6],
  ])('starts a new run from %s with a fresh optimizer, recorded in the config', async (_label, from, kind, step) => {
    const run = path.join(tmp, `b-${kind}-${Math.random().toString(36).slice(2)}`);
    await train(run, [...base(2), ...frozen, `train.init_from=${JSON.stringify(from())}`]);
    expect(maxWeightDiff(weightsAt(runA, 6), weightsAt(run, 2))).toBeLessThan(1e-6);
    expect(readMetrics(path.join(run, 'metrics.jsonl')).map((r) => r.step)).toEqual([1, 2]);
    const state = JSON.parse(fs.readFileSync(path.join(checkpointsRoot(run), checkpointName(2), 'state.json'), 'utf8'));
    expect(state.optimizer_t).toBe(2);
    const cfg = JSON.parse(fs.readFileSync(path.join(run, 'config.json'), 'utf8'));
    expect(cfg.train.init_from).toBe(from());
    expect(cfg.init_from).toMatchObject({ given: from(), kind, step, path: path.join(checkpointsRoot(runA), checkpointName(6)) });
    expect(cfg.init_from.weights_sha256).toMatch(/^[0-9a-f]{64}$/);
    // A fresh start from trained weights begins near the trained loss, not at the random-init loss.
    const a = readMetrics(path.join(runA, 'metrics.jsonl'));
    expect(readMetrics(path.join(run, 'metrics.jsonl'))[0].loss).toBeLessThan(a[0].loss);
  });

  test('starts from a Hugging Face directory (export-hf output)', async () => {
    const hf = path.join(tmp, 'hf');
    await exportHfCommand.handler({ checkpoint: path.join(checkpointsRoot(runA), checkpointName(6)), out: hf, $0: 'ndbg', _: [] } as never);
    const run = path.join(tmp, 'c-hf');
    await train(run, [...base(2), ...frozen, `train.init_from=${JSON.stringify(hf)}`]);
    expect(maxWeightDiff(weightsAt(runA, 6), weightsAt(run, 2))).toBeLessThan(1e-6);
    expect(JSON.parse(fs.readFileSync(path.join(run, 'config.json'), 'utf8')).init_from).toMatchObject({ kind: 'huggingface', step: null, path: hf });
  });

  test('a missing source or a different model is an error before anything is written', async () => {
    const run = path.join(tmp, 'bad');
    await expect(train(run, [...base(2), 'train.init_from="/nope/ckpt"'])).rejects.toThrow(/train\.init_from: \/nope\/ckpt does not exist/);
    await expect(train(run, [...base(2), 'model.d_ff=48', `train.init_from=${JSON.stringify(runA)}`])).rejects.toThrow(UserError);
    await expect(train(run, [...base(2), 'model.d_ff=48', `train.init_from=${JSON.stringify(runA)}`])).rejects.toThrow(/d_ff 32 ≠ 48/);
    expect(fs.existsSync(run)).toBe(false);
  });
});

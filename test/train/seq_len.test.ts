import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { buildDataset } from '../../src/data/build';
import { checkpointSeqLen, CHECKPOINT_SEQ_LEN_KEY, loadModelFromCheckpoint, readCheckpointConfig } from '../../src/model/checkpoint';
import { latestCheckpoint } from '../../src/train/checkpoint_dir';
import { trainFromConfig } from '../../src/train/run';

/**
 * A checkpoint records the context T it was trained at (config.json "seq_len"), which eval fits
 * prompts to; older checkpoints fall back to data.seq_len, then to the model's max_seq_len.
 * Model: test/fixtures/train/tiny-run.json (max_seq_len 32, data.seq_len 16).
 */
const root = path.resolve(__dirname, '../..');
let tmp: string;
let checkpoint: string;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-seqlen-'));
  const data = path.join(tmp, 'data');
  await buildDataset({
    sources: [{ name: 'code', path: path.join(root, 'test/fixtures/train/corpus.jsonl'), kind: 'code' }],
    out: data, tokenizer: 'byte', seqLen: 32, shardMb: 1, valFraction: 0.05, splitSeed: 0, maskContext: false, workers: 0, force: true, quiet: true,
  });
  const overrides = [`data.datasets=${JSON.stringify([data])}`, 'train.steps=2', 'train.backend=cpu', 'train.eval_every=0', 'train.checkpoint_every=0'];
  await trainFromConfig({ config: path.join(root, 'test/fixtures/train/tiny-run.json'), overrides, runDir: path.join(tmp, 'run'), resume: false, quiet: true, log: () => undefined });
  checkpoint = latestCheckpoint(path.join(tmp, 'run'))!.dir;
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('the trained context in the checkpoint', () => {
  test('config.json records the sequence length the run trained at, and loading the checkpoint returns it', () => {
    const { raw, config } = readCheckpointConfig(checkpoint);
    expect(raw[CHECKPOINT_SEQ_LEN_KEY]).toBe(16);
    expect(config.max_seq_len).toBe(32);
    const loaded = loadModelFromCheckpoint(checkpoint);
    expect(loaded.seqLen).toBe(16);
    loaded.model.dispose();
  });

  test('older checkpoints without it: data.seq_len when the run set it, else the model max_seq_len', () => {
    const { raw, config } = readCheckpointConfig(checkpoint);
    const { [CHECKPOINT_SEQ_LEN_KEY]: _recorded, ...older } = raw;
    expect(checkpointSeqLen(older, config)).toBe(16);
    expect(checkpointSeqLen({ ...older, data: { datasets: ['x'] } }, config)).toBe(32);
    expect(() => checkpointSeqLen({ ...older, seq_len: 64 }, config)).toThrow(/max_seq_len/);
  });
});

describe("a run's own config.json as the config", () => {
  const runDir = () => path.join(tmp, 'run');
  const quietly = { quiet: true, log: () => undefined };

  test('resumes the run it records (ndbg train --config RUN/config.json --out RUN --resume)', async () => {
    const recorded = path.join(runDir(), 'config.json');
    expect(JSON.parse(fs.readFileSync(recorded, 'utf8'))[CHECKPOINT_SEQ_LEN_KEY]).toBe(16);
    const before = JSON.parse(fs.readFileSync(path.join(checkpoint, 'state.json'), 'utf8')) as { step: number; tokens_seen: number };
    const s = await trainFromConfig({ config: recorded, overrides: ['train.steps=4'], runDir: runDir(), resume: true, ...quietly });
    expect({ start: s.startStep, end: s.endStep, startTokens: s.startTokens }).toEqual({ start: before.step, end: 4, startTokens: before.tokens_seen });
    expect(s.tokens).toBeGreaterThan(before.tokens_seen);
    // The record is written anew, with the context once at its root.
    const again = JSON.parse(fs.readFileSync(recorded, 'utf8')) as Record<string, unknown>;
    expect(again[CHECKPOINT_SEQ_LEN_KEY]).toBe(16);
    expect((again.train as { steps: number }).steps).toBe(4);
  });

  test('a recorded seq_len that the config does not resolve to is refused, naming the field', async () => {
    const raw = JSON.parse(fs.readFileSync(path.join(runDir(), 'config.json'), 'utf8')) as Record<string, unknown>;
    const file = path.join(tmp, 'other-context.json');
    fs.writeFileSync(file, JSON.stringify({ ...raw, [CHECKPOINT_SEQ_LEN_KEY]: 8 }));
    await expect(trainFromConfig({ config: file, overrides: ['train.steps=6'], runDir: runDir(), resume: true, ...quietly })).rejects.toThrow(
      /seq_len: 8 is the context this run config was recorded at, but it resolves to 16/,
    );
  });
});

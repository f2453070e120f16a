import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import {
  MARKER,
  checkpointName,
  checkpointsRoot,
  isComplete,
  latestCheckpoint,
  listCheckpoints,
  pruneCheckpoints,
  writeCheckpointDir,
} from '../../src/train/checkpoint_dir';
import { packCheckpoint, unpackCheckpoint, TrainerState } from '../../src/train/state';

let runDir: string;
beforeEach(() => {
  runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-ckpt-'));
});
afterEach(() => fs.rmSync(runDir, { recursive: true, force: true }));

const files = (step: number) => [
  { name: 'model.safetensors', data: new Uint8Array(100 + step) },
  { name: 'state.json', data: JSON.stringify({ step }) },
];

describe('atomic checkpoint directories', () => {
  it('writes, lists and finds the latest complete checkpoint', () => {
    for (const s of [10, 20, 30]) writeCheckpointDir(runDir, s, files(s));
    expect(listCheckpoints(runDir).map((c) => c.step)).toEqual([10, 20, 30]);
    expect(latestCheckpoint(runDir)!.dir).toBe(path.join(checkpointsRoot(runDir), checkpointName(30)));
    const marker = JSON.parse(fs.readFileSync(path.join(latestCheckpoint(runDir)!.dir, MARKER), 'utf8'));
    expect(marker.files['model.safetensors']).toBe(130);
  });

  it('ignores temp dirs, dirs without a marker and dirs whose files are truncated or missing', () => {
    writeCheckpointDir(runDir, 10, files(10));
    const root = checkpointsRoot(runDir);
    fs.mkdirSync(path.join(root, '.tmp-step-00000040-123'));
    fs.writeFileSync(path.join(root, '.tmp-step-00000040-123', MARKER), '{"step":40,"files":{}}');
    fs.mkdirSync(path.join(root, checkpointName(50))); // no marker
    writeCheckpointDir(runDir, 60, files(60));
    fs.truncateSync(path.join(root, checkpointName(60), 'model.safetensors'), 10);
    writeCheckpointDir(runDir, 70, files(70));
    fs.rmSync(path.join(root, checkpointName(70), 'state.json'));
    expect(isComplete(path.join(root, checkpointName(60)))).toBe(false);
    expect(listCheckpoints(runDir).map((c) => c.step)).toEqual([10]);
    // The next write removes stale temp dirs.
    writeCheckpointDir(runDir, 80, files(80));
    expect(fs.readdirSync(root).some((e) => e.startsWith('.tmp-'))).toBe(false);
  });

  it('keeps the newest N plus permanent ones', () => {
    for (let s = 5; s <= 40; s += 5) {
      writeCheckpointDir(runDir, s, files(s));
      pruneCheckpoints(runDir, 2, 20, s);
    }
    expect(listCheckpoints(runDir).map((c) => c.step)).toEqual([20, 35, 40]);
    expect(fs.readdirSync(checkpointsRoot(runDir)).sort()).toEqual([20, 35, 40].map(checkpointName));
  });

  it('drops a checkpoint off the cadence once a newer one exists, so it takes no place among the newest', () => {
    // Every 10 steps, keep 3; a signal stopped the run at 27 and the resume went on to 50.
    for (const s of [10, 20, 27, 30, 40, 50]) {
      writeCheckpointDir(runDir, s, files(s));
      pruneCheckpoints(runDir, 3, 0, s, 10);
      if (s === 27) expect(listCheckpoints(runDir).map((c) => c.step)).toEqual([10, 20, 27]);
    }
    expect(listCheckpoints(runDir).map((c) => c.step)).toEqual([30, 40, 50]);
    // Without the cadence it is one of the newest, as before.
    const other = path.join(runDir, 'other');
    for (const s of [10, 20, 27, 30]) {
      writeCheckpointDir(other, s, files(s));
      pruneCheckpoints(other, 3, 0, s);
    }
    expect(listCheckpoints(other).map((c) => c.step)).toEqual([20, 27, 30]);
  });

  it('round-trips weights, moments and state bit for bit', () => {
    const w = Float32Array.from([1.5, -0, NaN, 3.4028234663852886e38, 1e-45, -2.25]);
    const state: TrainerState = {
      format: 'ndbg-train-state/1',
      step: 7,
      optimizer_t: 6,
      schedule: { kind: 'cosine', position: 7, next_lr: 0.001 },
      tokens_seen: 1234,
      bad_steps_in_a_row: 0,
      bad_steps_total: 1,
      data_state: { version: 1, step: 7 },
      elapsed_s: 1.5,
      tokenizer: { path: 'tok.model', sha256: 'ab' },
    };
    const packed = packCheckpoint({
      weights: new Map([['model.norm.weight', { shape: [2, 3], data: w }]]),
      optimizer: { t: 6, moments: new Map([['m.model.norm.weight', w], ['v.model.norm.weight', w.map((x) => x * 2)]]) },
      state,
      config: { model: { d_model: 2 } },
    });
    const dir = writeCheckpointDir(runDir, 7, packed);
    const back = unpackCheckpoint(dir);
    const bytes = (a: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    expect(bytes(back.weights.get('model.norm.weight')!.data).equals(bytes(w))).toBe(true);
    expect(back.weights.get('model.norm.weight')!.shape).toEqual([2, 3]);
    expect(bytes(back.optimizer.moments.get('v.model.norm.weight')!).equals(bytes(w.map((x) => x * 2)))).toBe(true);
    expect(back.optimizer.t).toBe(6);
    expect(back.state).toEqual(state);
    expect(back.config).toEqual({ model: { d_model: 2 } });
  });
});

import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { buildDataset } from '../../src/data/build';
import { MixtureLoader } from '../../src/data/loader';
import { parseSourceSpec } from '../../src/data/sources';
import { initBackend } from '../../src/backend/backend';
import { resolveModelConfig } from '../../src/model/config';
import { writeHfModel } from '../../src/model/hf';
import { LlamaModel } from '../../src/model/model';
import { lrAt, type ScheduleConfig } from '../../src/train/schedule';
import { Rng } from '../../src/util/rng';
import { peerPython } from '../helpers/peer-python';

const ROOT = path.resolve(__dirname, '..', '..');

/** NDL-kind documents (whole-document rows, several per row) and text (a stream across rows). */
function writeInputs(dir: string): string[] {
  const rng = Rng.from(2, 'parity');
  const words = ['x = 1', 'n += 2', 'return y', 'for i in r:', 'é', 'pass', '<|frame_sep|>'];
  const body = (min: number, max: number) => {
    let t = '';
    const len = rng.range(min, max);
    while (t.length < len) t += rng.choice(words) + ' ';
    return t.slice(0, len);
  };
  const ndl = Array.from({ length: 40 }, (_, i) => JSON.stringify({ id: `p${i}`, direction: 'forward', actions: [], text: `<|begin_of_text|>${body(4, 20)}<|end_of_text|>` }));
  const web = Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: `w${i}`, text: body(20, 80) }));
  fs.writeFileSync(path.join(dir, 'ndl.jsonl'), ndl.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'web.jsonl'), web.join('\n') + '\n');
  return [`traces=${path.join(dir, 'ndl.jsonl')}:ndl`, `web=${path.join(dir, 'web.jsonl')}:text`];
}

const sha = (a: ArrayBufferView) => createHash('sha256').update(Buffer.from(a.buffer, a.byteOffset, a.byteLength)).digest('hex');

describe('PyTorch bridge exactness (scale/)', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-parity-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('same weights, same batch: transformers LlamaForCausalLM loss equals ndbg within 1e-4, with the document and loss masks; same rows, loader state and LRs', async () => {
    const peer = peerPython(['torch', 'transformers', 'pyarrow', 'safetensors']);
    if ('skip' in peer) {
      process.stderr.write(`skipped: ${peer.skip}\n`);
      return;
    }
    await initBackend('cpu', () => undefined);
    const data = path.join(dir, 'data');
    await buildDataset({
      sources: writeInputs(dir).map(parseSourceSpec),
      out: data,
      tokenizer: 'byte',
      seqLen: 32,
      shardMb: 0.002,
      valFraction: 0.1,
      splitSeed: 0,
      maskContext: true,
      workers: 0,
      force: false,
      quiet: true,
    });
    const weights = { traces: 2, web: 1 };
    const loaderOpts = { datasets: [data], weights, batchSize: 4, seed: 3, shuffleWindow: 8 };
    const loader = new MixtureLoader(loaderOpts);
    const batchIndex = 5; // past a shuffle window and a shard boundary
    for (let i = 0; i < batchIndex; i++) loader.next();
    const batch = loader.next();
    // The premise: several documents per row and masked targets inside documents.
    const docsInRow0 = new Set(Array.from(batch.docIds.subarray(0, 33)).filter((d) => d >= 0));
    expect(docsInRow0.size).toBeGreaterThan(1);

    const config = resolveModelConfig({ vocab_size: 286, d_model: 32, n_layers: 2, n_heads: 4, n_kv_heads: 2, d_ff: 64, max_seq_len: 32, init_std: 0.1, tie_embeddings: false });
    const model = LlamaModel.create(config, 7);
    const w = model.getWeights();
    const rng = Rng.from(7, 'norms');
    for (const t of w.values()) if (t.shape.length === 1) for (let i = 0; i < t.data.length; i++) t.data[i] = 0.5 + rng.next();
    model.setWeights(w);
    const ndbgLoss = model.loss(batch).dataSync()[0];
    const hf = path.join(dir, 'hf');
    writeHfModel(hf, config, model.getWeights());

    const schedules: Array<{ schedule: ScheduleConfig; steps: number }> = [
      { schedule: { kind: 'cosine', peak_lr: 3e-3, warmup_steps: 5, min_lr: 3e-4 }, steps: 40 },
      { schedule: { kind: 'cosine', peak_lr: 1e-3, warmup_steps: 0, min_lr: 0, decay_steps: 20 }, steps: 30 },
      { schedule: { kind: 'wsd', peak_lr: 1e-3, warmup_steps: 3, min_lr: 1e-5, decay_fraction: 0.25, decay_shape: 'sqrt' }, steps: 30 },
      { schedule: { kind: 'wsd', peak_lr: 1e-3, warmup_steps: 3, min_lr: 0, decay_fraction: 0.3, decay_shape: 'cosine' }, steps: 25 },
      { schedule: { kind: 'constant', peak_lr: 2e-3, warmup_steps: 4 }, steps: 10 },
    ];
    fs.writeFileSync(path.join(dir, 'schedules.json'), JSON.stringify(schedules));
    const r = spawnSync(
      peer.python,
      ['-m', 'ndbg_scale.parity', '--hf', hf, '--data', data, '--seed', '3', '--batch-size', '4', '--weights', JSON.stringify(weights), '--shuffle-window', '8', '--batch-index', String(batchIndex), '--schedules', path.join(dir, 'schedules.json')],
      { cwd: path.join(ROOT, 'scale'), encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`parity.py failed: ${r.stderr}`);
    const py = JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;

    // The Python loader gives the same rows and the same (resumable) state.
    expect(py.ids_sha256).toBe(sha(batch.ids));
    expect(py.loss_mask_sha256).toBe(sha(batch.lossMask));
    expect(py.doc_ids_sha256).toBe(sha(batch.docIds));
    expect(py.state).toEqual(loader.state());
    // The loss.
    process.stderr.write(`parity: ndbg ${ndbgLoss} torch ${py.loss as number} |diff| ${Math.abs(ndbgLoss - (py.loss as number)).toExponential(2)}\n`);
    expect(Math.abs((py.loss as number) - ndbgLoss)).toBeLessThan(1e-4);
    // It would fail without the document mask: the test sees the mask.
    expect(Math.abs((py.loss_causal_only as number) - ndbgLoss)).toBeGreaterThan(1e-3);
    // The schedules, step by step.
    const lrs = py.lrs as number[][];
    schedules.forEach((s, k) => {
      for (let i = 0; i < s.steps; i++) expect(Math.abs(lrs[k][i] - lrAt(s.schedule, i, s.steps))).toBeLessThanOrEqual(1e-15);
    });
    model.dispose();
  });
});

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { peerPython } from '../helpers/peer-python';
import { ndbg, ROOT, writePrograms } from './helpers';

interface MetricsLine {
  step: number;
  loss: number;
}

const readMetrics = (file: string): MetricsLine[] =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as MetricsLine);

/**
 * The round trip of docs/scale-out.md on the quickstart's stages (trace → ndl → data build with
 * the shipped 2k tokenizer): ndbg trains 7 steps, the step-5 checkpoint goes to HF, two gloo
 * processes under torchrun continue it for 20 steps (steps 6..25), ndbg imports the result and
 * evaluates it. Steps 6 and 7 ran on both sides, so the hand-over is checked exactly: same rows
 * (the loader state), same weights and optimizer buffers, same update. The run uses the
 * quickstart's optimizer: Muon for the blocks' matrices, AdamW for embeddings and norms.
 */
describe('scale-out: torchrun DDP continues an ndbg run and hands it back', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-ddp-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const peer = peerPython(['torch', 'transformers', 'pyarrow', 'safetensors']);
  const at = (p: string) => path.join(dir, p);
  const step5 = () => at('run/checkpoints/step-00000005');
  let ndbgLoss: Map<number, number>;
  /** scale/train.py in one process, continuing the step-5 checkpoint (or resuming --out). */
  const single = (out: string, extra: string[]) => {
    const python = (peer as { python: string }).python;
    const r = spawnSync(python, [path.join(ROOT, 'scale', 'train.py'), '--hf', at('hf'), '--from', step5(), '--out', at(out), '--threads', '1', '--quiet', ...extra], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`scale/train.py ${extra.join(' ')} failed (${r.status}):\n${r.stderr.slice(-4000)}`);
    return readMetrics(at(`${out}/metrics.jsonl`));
  };

  beforeAll(() => {
    if ('skip' in peer) return;
    writePrograms(at('programs.jsonl'), 48);
    writePrograms(at('heldout.jsonl'), 2, 48);
    ndbg(['trace', '--input', at('programs.jsonl'), '--out', at('traces.jsonl'), '--quiet']);
    ndbg(['ndl', '--traces', at('traces.jsonl'), '--out', at('docs.jsonl'), '--per-program', '2', '--quiet']);
    ndbg(['data', 'build', '--source', `ndl=${at('docs.jsonl')}:ndl`, '--tokenizer', path.join(ROOT, 'tokenizer', 'ndbg-2k.model'), '--seq-len', '256', '--val-fraction', '0.1', '--workers', '0', '--quiet', '--out', at('data')]);
    const config = {
      model: { vocab_size: 2048, d_model: 64, n_layers: 2, n_heads: 4, d_ff: 128, max_seq_len: 256, tie_embeddings: true, init_std: 0.02 },
      data: { datasets: [at('data')] },
      train: { steps: 7, micro_batch_size: 4, seed: 0, checkpoint_every: 5, keep_last: 3 },
      optim: { schedule: { kind: 'constant', peak_lr: 0.003, warmup_steps: 3 }, weight_decay: 0.1, grad_clip: 1.0, muon: {} },
    };
    fs.writeFileSync(at('config.json'), JSON.stringify(config));
    ndbg(['train', '--config', at('config.json'), '--out', at('run'), '--quiet']);
    ndbgLoss = new Map(readMetrics(at('run/metrics.jsonl')).map((m) => [m.step, m.loss]));
    ndbg(['export-hf', '--checkpoint', step5(), '--out', at('hf')]);
  });

  test('2 processes × 20 steps lower the loss; steps 6–7 equal ndbg’s; import-hf and eval next-state read the result', () => {
    if ('skip' in peer) {
      process.stderr.write(`skipped: ${peer.skip}\n`);
      return;
    }
    const t0 = Date.now();
    const r = spawnSync(
      peer.python,
      ['-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2', path.join(ROOT, 'scale', 'train.py'), '--hf', at('hf'), '--from', step5(), '--out', at('torch'), '--steps', '25', '--checkpoint-every', '0'],
      { cwd: dir, encoding: 'utf8' },
    );
    if (r.status !== 0) throw new Error(`torchrun failed (${r.status}):\n${r.stderr.slice(-4000)}`);
    const torch = readMetrics(at('torch/metrics.jsonl'));
    expect(torch.map((m) => m.step)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
    for (const step of [6, 7]) {
      const diff = Math.abs(torch[step - 6].loss - ndbgLoss.get(step)!);
      process.stderr.write(`scale ddp: step ${step} loss ndbg ${ndbgLoss.get(step)} torch ${torch[step - 6].loss} |diff| ${diff.toExponential(2)}\n`);
      expect(diff).toBeLessThan(1e-4);
    }
    const mean = (xs: MetricsLine[]) => xs.reduce((a, m) => a + m.loss, 0) / xs.length;
    const first = mean(torch.slice(0, 3));
    const last = mean(torch.slice(-3));
    process.stderr.write(`scale ddp: 20 steps on 2 gloo processes in ${((Date.now() - t0) / 1000).toFixed(1)} s, loss ${first.toFixed(3)} → ${last.toFixed(3)}\n`);
    expect(last).toBeLessThan(first - 0.5);

    const final = at('torch/checkpoints/step-00000025');
    expect(fs.existsSync(path.join(final, 'COMPLETE'))).toBe(true);
    ndbg(['import-hf', final, '--out', at('imported')]);
    expect(fs.existsSync(at('imported/tokenizer.model'))).toBe(true);
    ndbg(['eval', 'next-state', '--checkpoint', at('imported'), '--programs', at('heldout.jsonl'), '--per-program', '1', '--actions', 'step_into,inv_step_into', '--max-new-tokens', '24', '--out', at('eval'), '--quiet']);
    const result = JSON.parse(fs.readFileSync(at('eval/next_state.json'), 'utf8')) as { predictor: string; programs: number; tasks: number };
    expect(result).toMatchObject({ predictor: 'model', programs: 2 });
    expect(result.tasks).toBeGreaterThan(0);
    // The same tasks decoded without the SRC constraint are reported under their own name.
    ndbg(['eval', 'next-state', '--checkpoint', at('imported'), '--programs', at('heldout.jsonl'), '--per-program', '1', '--actions', 'step_into,inv_step_into', '--max-new-tokens', '24', '--out', at('eval-free'), '--quiet', '--no-src-constraint']);
    const free = JSON.parse(fs.readFileSync(at('eval-free/next_state.json'), 'utf8')) as { predictor: string; tasks: number };
    expect(free).toMatchObject({ predictor: 'model_free_src', tasks: result.tasks });

    // Bad input is one line naming the file, no traceback.
    const bad = spawnSync(peer.python, [path.join(ROOT, 'scale', 'train.py'), '--hf', at('no-such-dir'), '--config', at('config.json'), '--out', at('bad')], { cwd: dir, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain(`${at('no-such-dir')}: no config.json`);
    expect(bad.stderr).not.toContain('Traceback');
  });
  test('one process takes the same steps as two; a run stopped at a checkpoint and resumed gives the same losses', () => {
    if ('skip' in peer) {
      process.stderr.write(`skipped: ${peer.skip}\n`);
      return;
    }
    const whole = single('one', ['--steps', '10']);
    const ddp = readMetrics(at('torch/metrics.jsonl'));
    whole.forEach((m, i) => expect(Math.abs(m.loss - ddp[i].loss)).toBeLessThan(1e-5));
    single('stopped', ['--steps', '8']);
    expect(() => single('stopped', ['--steps', '10'])).toThrow('already holds a run');
    const resumed = single('stopped', ['--steps', '10', '--resume']);
    expect(resumed.map((m) => [m.step, m.loss])).toEqual(whole.map((m) => [m.step, m.loss]));
  });
});

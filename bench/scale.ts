import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { benchCorpus } from './corpus';
import { flagValue, intFlag } from './flags';
import { readManifest } from '../src/data/manifest';
import { exportHfCommand } from '../src/cli/commands/export-hf';
import { trainFromConfig } from '../src/train/run';
import { assetPath, packageRoot } from '../src/util/paths';
import { median } from '../src/util/stats';

/**
 * When to move to PyTorch (docs/scale-out.md): the same run config, data and step count trained
 * side by side in one run by
 *  - ndbg's tfjs trainer (`ndbg train`, backend auto),
 *  - scale/train.py in one process, with all cores as torch's intra-op threads and with one,
 *  - scale/train.py under torchrun, 2 gloo processes × 1 thread (DDP's overhead on one box),
 * reporting median tokens/s over the steps after the first two, and tokens per day.
 * Usage: npm run bench -- scale [--steps=N] [--config=FILE] [--seq-len=T]
 */
interface Line {
  step: number;
  tokens_per_s: number;
}


function steadyTokensPerS(metricsFile: string): number {
  const lines = fs
    .readFileSync(metricsFile, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
  return median(lines.slice(2).map((l) => l.tokens_per_s));
}

function peerPython(): string {
  const venv = path.join(packageRoot(), '.venv', 'bin', 'python');
  return process.env.NDBG_PEER_PYTHON ?? (fs.existsSync(venv) ? venv : 'python3');
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const opt = (name: string) => flagValue(args, name);
  const steps = intFlag(args, 'steps', 20);
  const configFile = opt('config') ?? assetPath('configs/quickstart.json');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-bench-scale-'));
  try {
    const config = JSON.parse(fs.readFileSync(configFile, 'utf8')) as { model: { max_seq_len: number } };
    const seqLen = intFlag(args, 'seq-len', config.model.max_seq_len);
    const dataDir = path.join(tmp, 'data');
    await benchCorpus(dataDir, assetPath('tokenizer/ndbg-2k.model'), seqLen);
    const overrides = [
      `data.datasets=${JSON.stringify([dataDir])}`,
      `train.steps=${steps}`,
      'train.eval_every=0',
      'train.checkpoint_every=0',
      // Throughput does not depend on the LR; a short warmup keeps any config's schedule valid.
      'optim.schedule.warmup_steps=1',
      `model.vocab_size=${readManifest(dataDir).tokenizer.vocabSize}`,
    ];
    const tfjsRun = path.join(tmp, 'tfjs');
    const tfjs = await trainFromConfig({ config: configFile, overrides, runDir: tfjsRun, resume: false, quiet: true, log: () => undefined });
    const ckpt = path.join(tfjsRun, 'checkpoints', `step-${String(steps).padStart(8, '0')}`);
    const hf = path.join(tmp, 'hf');
    await exportHfCommand.handler({ checkpoint: ckpt, out: hf, $0: 'ndbg', _: [] } as never);

    const python = peerPython();
    const torchRun = (name: string, launcher: string[], threads: number) => {
      const out = path.join(tmp, name);
      const r = spawnSync(python, [...launcher, assetPath('scale/train.py'), '--hf', hf, '--config', path.join(tfjsRun, 'config.json'), '--out', out, '--threads', String(threads), '--checkpoint-every', '0', '--quiet'], {
        cwd: tmp,
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`${name}: scale/train.py failed:\n${r.stderr.slice(-3000)}`);
      return steadyTokensPerS(path.join(out, 'metrics.jsonl'));
    };
    const tfjsTps = steadyTokensPerS(path.join(tfjsRun, 'metrics.jsonl'));
    const torch1 = torchRun('torch-1proc', [], os.cpus().length);
    const torch1t = torchRun('torch-1proc-1thread', [], 1);
    const torch2 = torchRun('torch-ddp2', ['-m', 'torch.distributed.run', '--standalone', '--nproc_per_node', '2'], 1);
    const torchVersion = spawnSync(python, ['-c', 'import torch, transformers; print(torch.__version__, transformers.__version__)'], { encoding: 'utf8' }).stdout.trim();
    const day = 86400;
    return {
      config: path.relative(packageRoot(), configFile),
      seq_len: seqLen,
      steps,
      tokens_per_step_note: 'micro_batch_size × grad_accum rows of seq_len tokens (targets that count)',
      tfjs_backend: tfjs.backend,
      torch: torchVersion,
      tokens_per_s: { tfjs: Math.round(tfjsTps), torch_1proc: Math.round(torch1), torch_1proc_1thread: Math.round(torch1t), torch_ddp2_gloo: Math.round(torch2) },
      tokens_per_day_millions: {
        tfjs: +((tfjsTps * day) / 1e6).toFixed(1),
        torch_1proc: +((torch1 * day) / 1e6).toFixed(1),
        torch_1proc_1thread: +((torch1t * day) / 1e6).toFixed(1),
        torch_ddp2_gloo: +((torch2 * day) / 1e6).toFixed(1),
      },
      ratio_torch_1proc_to_tfjs: +(torch1 / tfjsTps).toFixed(2),
      ratio_torch_1proc_1thread_to_tfjs: +(torch1t / tfjsTps).toFixed(2),
      ratio_torch_ddp2_to_tfjs: +(torch2 / tfjsTps).toFixed(2),
      note: `median tokens/s over steps 3..N of each run, one after another in this process, on a shared machine (other jobs running; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')} at the end)`,
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

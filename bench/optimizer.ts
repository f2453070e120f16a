import { flagValue, intFlag } from './flags';
import { productTraining, SHAPES } from './model';
import { benchCorpus } from './corpus';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BackendChoice, initBackend } from '../src/backend/backend';
import { loadModelConfig } from '../src/model/config';
import { loadRunConfig } from '../src/train/run_config';
import type { OptimConfig } from '../src/train/config';
import { assetPath } from '../src/util/paths';
import { median } from '../src/util/stats';

/**
 * `npm run bench -- optimizer [--shape=quickstart] [--steps=30] [--rounds=6]`: what Muon
 * (src/train/muon.ts) costs per train step beside AdamW, on one shape's product step
 * (forward, backward, clip, update) and the same batches. The two run in alternating blocks
 * of --steps/--rounds steps in one process, so a change in the machine's load falls on both;
 * the figure is the ratio of the median block times. What Muon buys per step is a learning
 * result (docs/eval.md), not measured here.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const shape = SHAPES[flagValue(args, 'shape') ?? 'quickstart'];
  if (!shape) throw new Error(`--shape: one of ${Object.keys(SHAPES).join(', ')}`);
  const steps = intFlag(args, 'steps', 30);
  const rounds = intFlag(args, 'rounds', 6);
  const perBlock = Math.max(1, Math.floor(steps / rounds));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-bench-optimizer-'));
  try {
    const dataDir = await benchCorpus(path.join(tmp, 'data'), assetPath(shape.tokenizer), loadModelConfig(assetPath(shape.config)).max_seq_len);
    const base = loadRunConfig(assetPath(shape.config), [`data.datasets=${JSON.stringify([dataDir])}`]);
    const resolved = (muon: OptimConfig['muon']) => ({ ...base, config: { ...base.config, optim: { ...base.config.optim, muon } } });
    await initBackend((flagValue(args, 'backend') ?? 'auto') as BackendChoice, () => undefined);
    const muonSettings = base.config.optim.muon ?? { momentum: 0.95, ns_steps: 5, update_scale: 0.2 };
    const warmup = 3;
    const arms = {
      adamw: productTraining(resolved(null), warmup + rounds * perBlock),
      muon: productTraining(resolved(muonSettings), warmup + rounds * perBlock),
    };
    const blockMs: Record<keyof typeof arms, number[]> = { adamw: [], muon: [] };
    for (const arm of Object.values(arms)) for (let i = 0; i < warmup; i++) arm.step(i);
    for (let r = 0; r < rounds; r++) {
      for (const [name, arm] of Object.entries(arms) as [keyof typeof arms, (typeof arms)['adamw']][]) {
        const t0 = performance.now();
        for (let i = 0; i < perBlock; i++) arm.step(warmup + r * perBlock + i);
        blockMs[name].push((performance.now() - t0) / perBlock);
      }
    }
    for (const arm of Object.values(arms)) arm.dispose();
    const adamw = median(blockMs.adamw);
    const muon = median(blockMs.muon);
    return {
      shape: shape.config,
      muon: muonSettings,
      steps_per_block: perBlock,
      rounds,
      step_ms: { adamw, muon },
      block_ms: blockMs,
      muon_over_adamw: muon / adamw,
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

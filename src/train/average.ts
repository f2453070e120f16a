/**
 * Latest-weight averaging (Kaddour 2022; Sanyal et al. 2023): the mean of a run's newest
 * checkpoints' weights, written as one model-only checkpoint, RUN/averaged. The quickstart's
 * schedule ends at a tenth of its peak learning rate, so its last steps still move the weights
 * around; the mean of its last five checkpoints, 50 steps apart, sits nearer the middle of where
 * they wander (docs/eval.md, "Session 32": +0.8 over all actions on two validation seeds). No
 * training step changes: the run's own checkpoints, and a resume from them, stay exactly what
 * they were.
 */
import * as fs from 'fs';
import * as path from 'path';
import { CONFIG_FILE, checkpointTokenizerPath, readCheckpointConfig, readCheckpointWeights, writeModelCheckpoint } from '../model/checkpoint';
import type { TensorMap } from '../model/safetensors';
import { listCheckpoints } from './checkpoint_dir';

/** The averaged checkpoint's directory inside a run directory. */
export const AVERAGED_DIR = 'averaged';

/** config.json's record of which checkpoints an averaged one is the mean of. */
export interface AveragedRecord {
  steps: number[];
}

/** The element-wise mean of weight maps with the same names and shapes (summed in float64). */
export function averageWeights(maps: readonly TensorMap[]): TensorMap {
  if (maps.length === 0) throw new Error('averageWeights: no weights to average');
  const [first] = maps;
  const out: TensorMap = new Map();
  for (const [name, t] of first) {
    const sum = new Float64Array(t.data.length);
    for (const [k, m] of maps.entries()) {
      const u = m.get(name);
      if (u === undefined || u.shape.join() !== t.shape.join()) {
        throw new Error(`averageWeights: weights ${k} ${u ? `has ${name} of shape [${u.shape}], not [${t.shape}]` : `lack ${name}`}`);
      }
      for (let i = 0; i < sum.length; i++) sum[i] += u.data[i];
    }
    out.set(name, { shape: [...t.shape], data: Float32Array.from(sum, (x) => x / maps.length) });
  }
  for (const [k, m] of maps.entries()) if (m.size !== first.size) throw new Error(`averageWeights: weights ${k} hold ${m.size} tensors, not ${first.size}`);
  return out;
}

/**
 * Writes RUN/averaged from the newest `count` complete checkpoints (fewer if the run has fewer),
 * replacing an earlier one, with the newest checkpoint's config (its "averaged" field lists the
 * steps) and a copy of its tokenizer. Returns the directory and the steps.
 */
export function writeAveragedCheckpoint(runDir: string, count: number): { dir: string } & AveragedRecord {
  const newest = listCheckpoints(runDir).slice(-count);
  if (newest.length === 0) throw new Error(`writeAveragedCheckpoint: ${runDir} has no complete checkpoint`);
  const last = newest[newest.length - 1].dir;
  const { config, raw } = readCheckpointConfig(last);
  const steps = newest.map((c) => c.step);
  const weights = averageWeights(newest.map((c) => readCheckpointWeights(c.dir)));
  const dir = path.join(runDir, AVERAGED_DIR);
  fs.rmSync(dir, { recursive: true, force: true });
  const averaged: AveragedRecord = { steps };
  writeModelCheckpoint(dir, config, weights, { extraConfig: { ...raw, averaged }, tokenizerFile: checkpointTokenizerPath(last) });
  return { dir, steps };
}

/** ` (the mean weights of steps …)` after an averaged checkpoint's path in what a command prints; '' for any other checkpoint. */
export function averagedNote(checkpointDir: string): string {
  const steps = averagedSteps(checkpointDir);
  return steps ? ` (the mean weights of steps ${steps.join(', ')})` : '';
}

/** The steps an averaged checkpoint is the mean of, or undefined for any other checkpoint. */
export function averagedSteps(checkpointDir: string): number[] | undefined {
  try {
    const raw = JSON.parse(fs.readFileSync(path.join(checkpointDir, CONFIG_FILE), 'utf8')) as { averaged?: AveragedRecord };
    return raw.averaged?.steps;
  } catch {
    return undefined;
  }
}

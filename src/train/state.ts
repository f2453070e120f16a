import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import type { OptimizerState } from './optimizer_types';
import { CheckpointFile } from './checkpoint_dir';
import { NDBG_WEIGHTS_METADATA, readSafetensors, writeSafetensorsFd } from '../model/safetensors';

/**
 * What a checkpoint holds besides the weights, and how the whole checkpoint is packed into
 * files and read back:
 *   model.safetensors      weights by HF-Llama name (float32)
 *   optimizer.safetensors  optimizer buffers: AdamW's `m.<name>`, `v.<name>`; Muon's momentum `m.<name>` (float32)
 *   state.json             TrainerState below
 *   config.json            the resolved run config (the `model` section is what
 *                          loadModelFromCheckpoint reads)
 * Both safetensors files are streamed tensor by tensor, in both directions, so a checkpoint is
 * never one Buffer (the optimizer file of a 1.8B model is 14 GB).
 */
export interface TrainerState {
  format: 'ndbg-train-state/1';
  /** Optimizer updates done; the next step to run is step + 1. */
  step: number;
  /** AdamW bias-correction counter (equals step unless NaN/Inf steps were skipped). */
  optimizer_t: number;
  /** The schedule is a pure function of the step; kept to check and to show. */
  schedule: { kind: string; position: number; next_lr: number };
  tokens_seen: number;
  /** Consecutive and total NaN/Inf steps skipped so far. */
  bad_steps_in_a_row: number;
  bad_steps_total: number;
  data_state: unknown;
  /** Training seconds before this checkpoint (for ETA and the report's wall time). */
  elapsed_s: number;
  /** The tokenizer the data was encoded with (path and hash, from the data manifest). */
  tokenizer: unknown;
}

export interface CheckpointContents {
  weights: Map<string, { shape: number[]; data: Float32Array }>;
  optimizer: OptimizerState;
  state: TrainerState;
  config: unknown;
}

export function packCheckpoint(c: CheckpointContents): CheckpointFile[] {
  const shapes = new Map([...c.weights].map(([k, v]) => [k, v.shape]));
  const moments = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [key, data] of c.optimizer.moments) {
    const shape = shapes.get(key.slice(2)) ?? [data.length];
    moments.set(key, { shape, data });
  }
  return [
    { name: 'model.safetensors', data: (fd: number) => void writeSafetensorsFd(fd, c.weights, NDBG_WEIGHTS_METADATA) },
    { name: 'optimizer.safetensors', data: (fd: number) => void writeSafetensorsFd(fd, moments, { t: String(c.optimizer.t) }) },
    { name: 'state.json', data: JSON.stringify(c.state, null, 1) + '\n' },
    { name: 'config.json', data: JSON.stringify(c.config, null, 2) + '\n' },
  ];
}

export function unpackCheckpoint(dir: string): CheckpointContents {
  // Only the two JSON files are read whole; they are small.
  const read = (name: string) => {
    const file = path.join(dir, name);
    try {
      return fs.readFileSync(file);
    } catch (e) {
      throw new UserError(`checkpoint ${dir}: cannot read ${name} (${(e as NodeJS.ErrnoException).code})`);
    }
  };
  const weights = readTensors(dir, 'model.safetensors');
  const opt = readTensors(dir, 'optimizer.safetensors');
  const state = JSON.parse(read('state.json').toString('utf8')) as TrainerState;
  if (state.format !== 'ndbg-train-state/1') {
    throw new UserError(`checkpoint ${dir}/state.json: unknown format ${JSON.stringify(state.format)}`);
  }
  const config = JSON.parse(read('config.json').toString('utf8')) as unknown;
  const moments = new Map([...opt].map(([k, v]) => [k, v.data]));
  return { weights, optimizer: { t: state.optimizer_t, moments }, state, config };
}

function readTensors(dir: string, name: string): Map<string, { shape: number[]; data: Float32Array }> {
  const file = path.join(dir, name);
  if (!fs.existsSync(file)) throw new UserError(`checkpoint ${dir}: cannot read ${name} (ENOENT)`);
  return readSafetensors(file).tensors;
}

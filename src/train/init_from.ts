import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { readCheckpointConfig, readCheckpointWeights } from '../model/checkpoint';
import type { ModelConfig } from '../model/config';
import { readHfModel } from '../model/hf';
import { LlamaModel } from '../model/model';
import type { TensorMap } from '../model/safetensors';
import { UserError } from '../util/errors';
import { latestCheckpoint } from './checkpoint_dir';

/**
 * `train.init_from`: the weights a new run starts from (nanoGPT's init_from, LitGPT's
 * --initial_checkpoint_dir). The optimizer, schedule, data position and step start fresh; only
 * the weights are taken. Accepted: a checkpoint directory (`RUN/checkpoints/step-N`, an
 * `import-hf` output), a run directory (its latest complete checkpoint), or a Hugging Face Llama
 * directory (`export-hf` output or any LlamaForCausalLM save). The source model must have the
 * run's shapes; max_seq_len and init_std may differ (they shape no weight).
 */
export interface InitFromRecord {
  /** As written in the config. */
  given: string;
  /** The directory the weights were read from (absolute). */
  path: string;
  kind: 'checkpoint' | 'huggingface';
  /** The checkpoint's training step, when it has one. */
  step: number | null;
  /** sha256 of the weights file that was read. */
  weights_sha256: string;
}

const SHAPE_FIELDS = ['vocab_size', 'd_model', 'n_layers', 'n_heads', 'n_kv_heads', 'd_ff', 'tie_embeddings', 'rope_theta', 'norm_eps'] as const;

export function loadInitWeights(given: string, model: ModelConfig): { weights: TensorMap; record: InitFromRecord } {
  let dir = path.resolve(given);
  if (!fs.existsSync(dir)) throw new UserError(`train.init_from: ${given} does not exist`);
  if (!fs.statSync(dir).isDirectory()) throw new UserError(`train.init_from: ${given} is not a directory (give a checkpoint or Hugging Face model directory)`);
  const hasWeights = ['model.safetensors', 'model.safetensors.index.json'].some((f) => fs.existsSync(path.join(dir, f)));
  if (!hasWeights) {
    // A run directory: its latest complete checkpoint.
    const latest = latestCheckpoint(dir);
    if (!latest) throw new UserError(`train.init_from: ${given} has no model.safetensors and no complete checkpoint (not a checkpoint, run or Hugging Face directory)`);
    dir = path.resolve(latest.dir);
  }
  if (!fs.existsSync(path.join(dir, 'config.json'))) throw new UserError(`train.init_from: ${dir} has no config.json`);
  const raw = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8')) as Record<string, unknown>;
  const isCheckpoint = raw !== null && typeof raw === 'object' && 'model' in raw && !('model_type' in raw);
  let source: ModelConfig;
  let weights: TensorMap;
  let weightsFile: string;
  if (isCheckpoint) {
    source = readCheckpointConfig(dir).config;
    weights = readCheckpointWeights(dir);
    weightsFile = path.join(dir, 'model.safetensors');
  } else {
    ({ config: source, weights } = readHfModel(dir));
    weightsFile = fs.existsSync(path.join(dir, 'model.safetensors')) ? path.join(dir, 'model.safetensors') : path.join(dir, 'model.safetensors.index.json');
  }
  const diffs = SHAPE_FIELDS.filter((f) => source[f] !== model[f]).map((f) => `${f} ${JSON.stringify(source[f])} ≠ ${JSON.stringify(model[f])}`);
  if (diffs.length) throw new UserError(`train.init_from: the model in ${dir} differs from the config's model section: ${diffs.join(', ')}`);
  LlamaModel.checkWeights(model, weights, weightsFile);
  let step: number | null = null;
  try {
    const state = JSON.parse(fs.readFileSync(path.join(dir, 'state.json'), 'utf8')) as { step?: unknown };
    if (typeof state.step === 'number') step = state.step;
  } catch {
    // no trainer state (an imported or HF model): no step to record
  }
  const weights_sha256 = createHash('sha256').update(fs.readFileSync(weightsFile)).digest('hex');
  return { weights, record: { given, path: dir, kind: isCheckpoint ? 'checkpoint' : 'huggingface', step, weights_sha256 } };
}

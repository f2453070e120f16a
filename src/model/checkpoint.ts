import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { ModelConfig, resolveModelConfig } from './config';
import { LlamaModel } from './model';
import { isNdbgLayout, NDBG_WEIGHTS_METADATA, readSafetensors, TensorMap, writeSafetensors } from './safetensors';

/**
 * The model's view of a checkpoint directory (the trainer writes more files; see docs/model.md):
 *   model.safetensors   weights by HF Llama name, model layout (linear weights [in, out]), float32,
 *                       marked {format: ndbg, ndbg_layout: linear-in-out} (files before the mark say
 *                       format: pt and are read the same way: a checkpoint's config.json has a model section)
 *   config.json         the resolved config; its "model" section builds the model, and "seq_len"
 *                       (CHECKPOINT_SEQ_LEN_KEY) is the context T the weights were trained at
 *   tokenizer.model     optional copy of the sentencepiece model (import-hf writes one)
 *   state.json          optional trainer state; its "tokenizer.path" names the tokenizer used
 */
export const WEIGHTS_FILE = 'model.safetensors';
export const CONFIG_FILE = 'config.json';
export const TOKENIZER_FILE = 'tokenizer.model';
/** config.json's top-level field holding the context T a checkpoint was trained at (written by src/train/run.ts). */
export const CHECKPOINT_SEQ_LEN_KEY = 'seq_len';

/**
 * The context T a checkpoint was trained at, which eval asks every "does it fit?" against:
 * config.json's "seq_len"; for checkpoints written before it was recorded, the run's
 * "data.seq_len" when it was set, else the model's max_seq_len (what the data was then built at).
 */
export function checkpointSeqLen(raw: Record<string, unknown>, config: ModelConfig): number {
  const recorded = raw[CHECKPOINT_SEQ_LEN_KEY] ?? (raw.data as { seq_len?: unknown } | undefined)?.seq_len;
  if (recorded === undefined) return config.max_seq_len;
  if (!Number.isInteger(recorded) || (recorded as number) < 1 || (recorded as number) > config.max_seq_len) {
    throw new UserError(`checkpoint config: seq_len ${JSON.stringify(recorded)} must be an integer in 1..model.max_seq_len (${config.max_seq_len})`);
  }
  return recorded as number;
}

/** Fails early (before any work) when `dir` is not a checkpoint directory. */
export function assertCheckpointDir(dir: string): void {
  if (!fs.existsSync(dir)) throw new UserError(`checkpoint ${dir} does not exist`);
  if (!fs.statSync(dir).isDirectory()) throw new UserError(`checkpoint ${dir} is not a directory`);
  if (!fs.existsSync(path.join(dir, CONFIG_FILE))) throw new UserError(`checkpoint ${dir} has no ${CONFIG_FILE} (not a checkpoint directory)`);
}

export function readCheckpointConfig(dir: string): { config: ModelConfig; raw: Record<string, unknown> } {
  const file = path.join(dir, CONFIG_FILE);
  assertCheckpointDir(dir);
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new UserError(`cannot read checkpoint config ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || raw.model === undefined) {
    const hfHint = typeof raw === 'object' && raw !== null && 'model_type' in raw ? ' (this is a Hugging Face config: use `ndbg import-hf` first, or train.init_from)' : '';
    throw new UserError(`${file}: missing "model" section${hfHint}`);
  }
  return { config: resolveModelConfig(raw.model, `${file} (model section)`), raw };
}

/** The weights of a checkpoint (model layout), checked against its config's shapes by fromWeights. */
export function readCheckpointWeights(dir: string): TensorMap {
  const file = path.join(dir, WEIGHTS_FILE);
  const { tensors, metadata } = readSafetensors(file);
  // Only a file that says it is ndbg's own, or an unmarked/legacy one (format pt, written by
  // ndbg before the mark), is read in model layout; anything else claiming another layout is refused.
  if (!isNdbgLayout(metadata) && metadata.ndbg_layout !== undefined) {
    throw new UserError(`${file}: unknown ndbg_layout ${JSON.stringify(metadata.ndbg_layout)}`);
  }
  return tensors;
}

/** Builds the model stored in a checkpoint directory (on the current tfjs backend). */
export function loadModelFromCheckpoint(dir: string): { model: LlamaModel; config: ModelConfig; raw: Record<string, unknown>; seqLen: number } {
  const { config, raw } = readCheckpointConfig(dir);
  const file = path.join(dir, WEIGHTS_FILE);
  return { model: LlamaModel.fromWeights(config, readCheckpointWeights(dir), file), config, raw, seqLen: checkpointSeqLen(raw, config) };
}

/**
 * Writes a model-only checkpoint (weights, {"model": config} plus `extraConfig`, and an optional
 * tokenizer copy) into a temp directory and renames it into place, so `dir` is either complete
 * or absent. Refuses to overwrite an existing directory.
 */
export function writeModelCheckpoint(
  dir: string,
  config: ModelConfig,
  weights: TensorMap,
  opts: { extraConfig?: Record<string, unknown>; tokenizerFile?: string } = {},
): void {
  if (fs.existsSync(dir)) throw new UserError(`${dir} already exists; choose a new --out`);
  const tmp = `${dir.replace(/\/+$/, '')}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  writeSafetensors(path.join(tmp, WEIGHTS_FILE), weights, NDBG_WEIGHTS_METADATA);
  fs.writeFileSync(path.join(tmp, CONFIG_FILE), JSON.stringify({ ...opts.extraConfig, model: config }, null, 2) + '\n');
  if (opts.tokenizerFile) fs.copyFileSync(opts.tokenizerFile, path.join(tmp, TOKENIZER_FILE));
  fs.renameSync(tmp, dir);
}

/**
 * The tokenizer that goes with a checkpoint: its own tokenizer.model copy, else the path in
 * state.json ("tokenizer.path", as the data manifest recorded it), else config.json's
 * "tokenizer" (a path string or {path}). Undefined when none is recorded or the file is gone.
 */
export function checkpointTokenizerPath(dir: string): string | undefined {
  const candidates: string[] = [path.join(dir, TOKENIZER_FILE)];
  const pick = (v: unknown) => {
    if (typeof v === 'string') candidates.push(v, path.resolve(dir, v));
    else if (v && typeof v === 'object' && typeof (v as { path?: unknown }).path === 'string') pick((v as { path: string }).path);
  };
  for (const [file, key] of [['state.json', 'tokenizer'], [CONFIG_FILE, 'tokenizer']] as const) {
    try {
      const json = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Record<string, unknown>;
      pick(json[key]);
    } catch {
      // absent or unreadable: try the next source
    }
  }
  return candidates.find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
}

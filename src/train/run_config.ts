import * as path from 'path';
import { z } from 'zod';
import { loadConfig } from '../util/config';
import { UserError } from '../util/errors';
import { modelConfigSchema, resolveModelConfig, ModelConfig } from '../model/config';
import { readManifest, MANIFEST_FILE, Manifest } from '../data/manifest';
import { OptimSchema, TrainSchema } from './config';

/**
 * The whole run config of `ndbg train`: the model's section (src/model/config.ts) composed with
 * the trainer's (`train`, `optim`, ./config.ts) and `data` below, all strict, so a typo is an
 * error. Cross-file checks (the data's seq_len and vocabulary against the config) run right after
 * validation, before any model is built.
 */
export const DataSchema = z
  .object({
    /** Data set directories built by `ndbg data build` (relative paths: to the working directory). */
    datasets: z.array(z.string().min(1)).min(1),
    /** Mixture weights by source name (default: proportional to each source's train tokens). */
    weights: z.record(z.number().min(0)).optional(),
    /** Train on the first seq_len+1 tokens of each row; default and maximum: the data's seq_len. */
    seq_len: z.number().int().positive().optional(),
    shuffle_window: z.number().int().positive().default(4096),
    /** sha256-check shards as they load (cheap next to training; off only for huge data). */
    verify_sha256: z.boolean().default(true),
    /** Validation rows per source (a fixed prefix of the val split); default: all of them. */
    val_max_rows_per_source: z.number().int().positive().optional(),
  })
  .strict();

export const RunConfigSchema = z
  .object({
    model: modelConfigSchema,
    data: DataSchema,
    train: TrainSchema,
    optim: OptimSchema.default({}),
  })
  .strict();

export type RunConfig = z.infer<typeof RunConfigSchema>;

export interface ResolvedRun {
  config: RunConfig;
  model: ModelConfig;
  manifest: Manifest;
  /** Tokens per row the model sees (T). */
  seqLen: number;
  source: string;
}

export function loadRunConfig(file: string | undefined, overrides: string[]): ResolvedRun {
  if (!file) throw new UserError('train: --config FILE is required (e.g. configs/tiny.json)');
  const config = loadConfig(RunConfigSchema, { file, overrides });
  return resolveRun(config, overrides.length ? `${file} with --set overrides` : file);
}

/** Checks the config against the data it names; every problem names the field and the file. */
export function resolveRun(config: RunConfig, source: string): ResolvedRun {
  const model = resolveModelConfig(config.model, `${source} (model section)`);
  const first = config.data.datasets[0];
  const manifest = readManifest(first);
  const manifestFile = path.join(first, MANIFEST_FILE);
  const seqLen = config.data.seq_len ?? manifest.seqLen;
  const problems: string[] = [];
  if (seqLen > manifest.seqLen) {
    problems.push(`  data.seq_len: ${seqLen} is larger than the data's seq_len ${manifest.seqLen} (${manifestFile})`);
  }
  if (seqLen > model.max_seq_len) {
    problems.push(`  model.max_seq_len: ${model.max_seq_len} is smaller than the training seq_len ${seqLen}`);
  }
  if (model.vocab_size !== manifest.tokenizer.vocabSize) {
    problems.push(
      `  model.vocab_size: ${model.vocab_size} differs from the tokenizer's ${manifest.tokenizer.vocabSize} ` +
        `(${manifest.tokenizer.path}, per ${manifestFile})`,
    );
  }
  const sched = config.optim.schedule;
  if (sched.warmup_steps > config.train.steps) {
    problems.push(`  optim.schedule.warmup_steps: ${sched.warmup_steps} is more than train.steps ${config.train.steps}`);
  }
  if (problems.length) throw new UserError(`invalid config ${source}:\n${problems.join('\n')}`);
  return { config, model, manifest, seqLen, source };
}

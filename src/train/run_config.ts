import * as path from 'path';
import { z } from 'zod';
import { loadConfig } from '../util/config';
import { UserError } from '../util/errors';
import { modelConfigSchema, resolveModelConfig, ModelConfig } from '../model/config';
import { readManifest, MANIFEST_FILE, Manifest } from '../data/manifest';
import { DataSchema } from '../data/config';
import { OptimSchema, TrainSchema } from './config';
import { CHECKPOINT_SEQ_LEN_KEY } from '../model/checkpoint';

/**
 * The whole run config of `ndbg train`: the model's section (src/model/config.ts) composed with
 * the trainer's (`train`, `optim`, ./config.ts) and the data's (`data`, src/data/config.ts), all
 * strict, so a typo is an error. Cross-file checks (the data's seq_len and vocabulary against the config) run right after
 * validation, before any model is built.
 */
export const RunConfigSchema = z
  .object({
    model: modelConfigSchema,
    data: DataSchema,
    train: TrainSchema,
    optim: OptimSchema.default({}),
    // What a run adds to its own record, RUN/config.json (./run.ts recordedConfig), so that the
    // record reads back as a config (`ndbg train --config RUN/config.json --out RUN --resume`):
    // the context T it trained at, which must agree with the one this config resolves to, and
    // where its initial weights came from, which is a record and not read (train.init_from is).
    [CHECKPOINT_SEQ_LEN_KEY]: z.number().int().positive().optional(),
    init_from: z.unknown().optional(),
  })
  .strict();

export type RunConfig = z.infer<typeof RunConfigSchema>;

export interface ResolvedRun {
  config: RunConfig;
  model: ModelConfig;
  manifest: Manifest;
  /** The context T the run trains at (rows of T+1 tokens; see trainingSeqLen). */
  seqLen: number;
  source: string;
}

export function loadRunConfig(file: string | undefined, overrides: string[]): ResolvedRun {
  if (!file) throw new UserError('train: --config FILE is required (e.g. configs/tiny.json)');
  return resolveRun(loadRunConfigFile(file, overrides), overrides.length ? `${file} with --set overrides` : file);
}

/** A run config file with its `--set` overrides, validated; not yet checked against its data (resolveRun). */
export function loadRunConfigFile(file: string, overrides: string[]): RunConfig {
  return loadConfig(RunConfigSchema, { file, overrides });
}

/**
 * The one rule for the context T a run trains at: `data.seq_len` when set, else the data's own
 * seq_len (its manifest). Before the data exists (the quickstart builds it for the run), the data
 * will be built at the model's max_seq_len, so that is the default. The checkpoint records the
 * result (CHECKPOINT_SEQ_LEN_KEY in src/model/checkpoint.ts) for eval.
 */
export function trainingSeqLen(config: RunConfig, dataSeqLen: number = config.model.max_seq_len): number {
  return config.data.seq_len ?? dataSeqLen;
}

/** Checks the config against the data it names; every problem names the field and the file. */
export function resolveRun(config: RunConfig, source: string): ResolvedRun {
  const model = resolveModelConfig(config.model, `${source} (model section)`);
  const first = config.data.datasets[0];
  const manifest = readManifest(first);
  const manifestFile = path.join(first, MANIFEST_FILE);
  const seqLen = trainingSeqLen(config, manifest.seqLen);
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
  const recorded = config[CHECKPOINT_SEQ_LEN_KEY];
  if (recorded !== undefined && recorded !== seqLen) {
    problems.push(
      `  ${CHECKPOINT_SEQ_LEN_KEY}: ${recorded} is the context this run config was recorded at, but it resolves to ${seqLen} ` +
        `(data.seq_len, else the data's seq_len in ${manifestFile})`,
    );
  }
  const sched = config.optim.schedule;
  if (sched.warmup_steps > config.train.steps) {
    problems.push(`  optim.schedule.warmup_steps: ${sched.warmup_steps} is more than train.steps ${config.train.steps}`);
  }
  if (problems.length) throw new UserError(`invalid config ${source}:\n${problems.join('\n')}`);
  // The record's own fields are written anew by the run (./run.ts), never carried over.
  const { [CHECKPOINT_SEQ_LEN_KEY]: _seqLen, init_from: _initRecord, ...settings } = config;
  return { config: settings, model, manifest, seqLen, source };
}

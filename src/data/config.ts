import { z } from 'zod';
import type { LoaderOptions } from './loader';
import type { ValidationOptions } from './validation';

/**
 * The `data` section of a run config (`configs/*.json`): which data sets a run trains on and how
 * it reads them. Composed into the run config by src/train/run_config.ts, like the model's
 * section; the loader's options are made from it here, so its field names are translated in the
 * stage that owns both.
 */
export const DataSchema = z
  .object({
    /** Data set directories built by `ndbg data build` (relative paths: to the working directory). */
    datasets: z.array(z.string().min(1)).min(1),
    /** Mixture weights by source name (default: proportional to each source's train tokens). */
    weights: z.record(z.number().min(0)).optional(),
    /** The context T the run trains at: the first T+1 tokens of each row; default and maximum: the data's seq_len. */
    seq_len: z.number().int().positive().optional(),
    shuffle_window: z.number().int().positive().default(4096),
    /** sha256-check shards as they load (cheap next to training; off only for huge data). */
    verify_sha256: z.boolean().default(true),
    /** Validation rows per source (a fixed prefix of the val split); default: all of them. */
    val_max_rows_per_source: z.number().int().positive().optional(),
  })
  .strict();

export type DataConfig = z.infer<typeof DataSchema>;

/** What the trainer adds to the data section: its batch layout, seed and tokenizer. */
export interface StreamSettings {
  batchSize: number;
  seed: number;
  tokenizerSha256: string;
}

/** The training loader's options for a run's data section. */
export function loaderOptions(data: DataConfig, s: StreamSettings): LoaderOptions {
  return {
    datasets: data.datasets,
    weights: data.weights,
    batchSize: s.batchSize,
    seed: s.seed,
    shuffleWindow: data.shuffle_window,
    verifySha256: data.verify_sha256,
    tokenizerSha256: s.tokenizerSha256,
  };
}

/** The validation stream's options for a run's data section (every source, stored order). */
export function validationOptions(data: DataConfig, s: Omit<StreamSettings, 'seed'>): ValidationOptions {
  return {
    datasets: data.datasets,
    batchSize: s.batchSize,
    maxRowsPerSource: data.val_max_rows_per_source,
    verifySha256: data.verify_sha256,
    tokenizerSha256: s.tokenizerSha256,
  };
}

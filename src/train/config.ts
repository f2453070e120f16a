import { z } from 'zod';
import { BACKENDS } from '../backend/backend';

/**
 * The trainer's sections of a run config (`configs/*.json`): `train` and `optim`.
 * The `model` section belongs to src/model and `data` to src/data/config.ts; ./run_config.ts composes them.
 *
 * Omitting `optim` gives the paper's recipe (arXiv 2603.09951): AdamW, peak LR 1e-3 after 750
 * linear warmup steps, cosine to 0, weight decay 0.1 (β = 0.9/0.95, clip 1.0 are the usual
 * Llama values; the paper does not state them).
 */
const int = (min: number) => z.number().int().min(min);

export const ScheduleSchema = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('cosine'),
      peak_lr: z.number().positive(),
      warmup_steps: int(0),
      min_lr: z.number().min(0),
      /** Step where the cosine reaches min_lr (default: the last step). */
      decay_steps: int(1).optional(),
    })
    .strict(),
  z
    .object({
      kind: z.literal('wsd'),
      peak_lr: z.number().positive(),
      warmup_steps: int(0),
      min_lr: z.number().min(0),
      decay_fraction: z.number().gt(0).max(1),
      decay_shape: z.enum(['linear', 'cosine', 'sqrt']),
    })
    .strict(),
  z.object({ kind: z.literal('constant'), peak_lr: z.number().positive(), warmup_steps: int(0) }).strict(),
]);

export const PAPER_SCHEDULE = { kind: 'cosine', peak_lr: 1e-3, warmup_steps: 750, min_lr: 0 } as const;

export const OptimSchema = z
  .object({
    schedule: ScheduleSchema.default({ ...PAPER_SCHEDULE }),
    beta1: z.number().min(0).lt(1).default(0.9),
    beta2: z.number().min(0).lt(1).default(0.95),
    eps: z.number().positive().default(1e-8),
    weight_decay: z.number().min(0).default(0.1),
    /** Global gradient-norm clip; 0 disables. */
    grad_clip: z.number().min(0).default(1.0),
    /** Regexes on HF parameter names that get no weight decay (besides 1-D tensors). */
    no_decay: z.array(z.string()).default(['embed_tokens']),
    /** Decay 1-D tensors (norm weights, biases) too; off by default. */
    decay_vectors: z.boolean().default(false),
    /**
     * Muon for the transformer blocks' matrices (src/train/muon.ts), AdamW for the rest, under
     * the one LR schedule; null: AdamW for every parameter.
     */
    muon: z
      .object({
        momentum: z.number().min(0).lt(1).default(0.95),
        ns_steps: int(1).default(5),
        /** s in the update's factor s·√max(rows, cols), which matches an AdamW update's RMS at 0.2. */
        update_scale: z.number().positive().default(0.2),
      })
      .strict()
      .nullable()
      .default(null),
  })
  .strict();

export const TrainSchema = z
  .object({
    /** Optimizer updates in the run (the schedule's length). */
    steps: int(1),
    /** Rows per micro-batch. */
    micro_batch_size: int(1),
    /** Micro-batches per update; the update's batch is micro_batch_size × grad_accum rows. */
    grad_accum: int(1).default(1),
    seed: int(0).default(0),
    /** Backend: auto picks tensorflow-gpu, tensorflow, wasm, cpu in that order of availability. */
    backend: z.enum(BACKENDS).default('auto'),
    log_every: int(1).default(1),
    /** Validation every N steps (and at the end); 0 disables. */
    eval_every: int(0).default(0),
    /** Validation batches (of micro_batch_size rows) per evaluation. */
    eval_batches: int(1).default(4),
    /** Checkpoint every N steps (and at the end); 0 means only at the end. */
    checkpoint_every: int(0).default(0),
    /** Keep the newest N checkpoints... */
    keep_last: int(1).default(2),
    /** ...plus every checkpoint whose step is a multiple of this (0: none kept permanently). */
    keep_every: int(0).default(0),
    /**
     * At the end of the run, write RUN/averaged: the mean weights of the newest N checkpoints
     * (src/train/average.ts); 0 or 1 writes none. The newest N are kept whatever keep_last says.
     */
    average_last: int(0).default(0),
    /** Stop after this many consecutive steps with a NaN/Inf loss or gradient. */
    max_bad_steps: int(1).default(5),
    /**
     * Wall-clock budget for the training loop (minutes); null: none. The schedule's horizon is
     * fitted to the steps that fit at the measured pace after 20 steps and refitted at a quarter
     * of the run, then halfway through each remaining stretch with the recent pace, so the LR
     * still decays to its floor when time is up; a budgeted run
     * is not bit-reproducible (its length depends on the machine).
     */
    max_minutes: z.number().positive().nullable().default(null),
    /** Peak FLOP/s of the hardware for MFU; 0 means MFU is not reported. */
    peak_flops: z.number().min(0).default(0),
    /** Also write TensorBoard scalars (loss, lr, grad norm, tokens/s, val loss) beside metrics.jsonl. */
    tensorboard: z.boolean().default(false),
    /**
     * Start a new run from existing weights (optimizer fresh): a checkpoint directory or a Hugging
     * Face Llama directory whose model matches the `model` section (src/train/init_from.ts).
     */
    init_from: z.string().min(1).nullable().default(null),
  })
  .strict();

export type OptimConfig = z.infer<typeof OptimSchema>;
export type TrainConfig = z.infer<typeof TrainSchema>;

import * as fs from 'fs';
import * as path from 'path';
import { z } from 'zod';
import { BACKENDS } from '../backend/backend';
import { DEFAULT_BATCH_SIZE, DEFAULT_MAX_NEW_TOKENS } from '../eval/model_completer';
import { ALL_ACTIONS } from '../eval/tasks';
import { modelStats } from '../model/config';
import type { ActionKind } from '../ndl/tokens';
import { BYTE_TOKENIZER_NAME } from '../tokenizer';
import { resolveRun, RunConfigSchema, type RunConfig } from '../train/run_config';
import { applyOverride, parseOverride, readJsonFile, validateConfig } from '../util/config';
import { UserError } from '../util/errors';

/**
 * A sweep's grid file (`ndbg sweep GRID.json`, docs/scaling.md): sizes × budgets × seeds, each
 * cell an ordinary `ndbg train` run derived from one base run config. The learning-rate and
 * warmup rules are part of the grid, so the file alone says how every cell was trained.
 */
const positive = z.number().positive();

const SizeSchema = z
  .object({
    /** Names the cell directories: letters, digits, `-`, `_`, `.`. */
    name: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" or "-" only'),
    /** Merged over the base config's model section. */
    model: z.record(z.unknown()),
    /** This size's peak LR and warmup, overriding the rules. */
    peak_lr: positive.optional(),
    warmup_steps: z.number().int().min(0).optional(),
  })
  .strict();

/**
 * `next_state_eval`: the next-state eval of each cell's last checkpoint, after it trains (or by
 * `ndbg sweep --eval-only`), with the options of `ndbg eval next-state`.
 */
const NextStateEvalSchema = z
  .object({
    /** Held-out programs (CruxEval-style JSONL, traced here) or their traces (`ndbg trace` JSONL); relative to the grid file. */
    programs: z.string().min(1),
    /** Only the first N programs (`--limit`). */
    max_programs: z.number().int().min(1).optional(),
    /** Tasks per program and action (`--per-program`). */
    per_program: z.number().int().min(1).default(2),
    actions: z.union([z.literal('all'), z.array(z.enum(ALL_ACTIONS as unknown as [ActionKind, ...ActionKind[]])).min(1)]).default('all'),
    seed: z.number().int().min(0).default(0),
    max_new_tokens: z.number().int().min(1).default(DEFAULT_MAX_NEW_TOKENS),
    /** Prompts decoded together; changes speed, not results. */
    batch_size: z.number().int().min(1).default(DEFAULT_BATCH_SIZE),
    src_constraint: z.boolean().default(true),
    /** Default: the backend the cell trained on (its train.backend). */
    backend: z.enum(BACKENDS).optional(),
    /** Sandbox workers tracing the programs. */
    workers: z.number().int().min(1).default(1),
  })
  .strict();

export type NextStateEvalSpec = z.infer<typeof NextStateEvalSchema>;

export const GridSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, ".", "_" or "-" only'),
    /** The run config every cell starts from; relative to the grid file. */
    base_config: z.string().min(1),
    /** `dotted.path=value` overrides applied to the base config for every cell (as `--set`). */
    set: z.array(z.string()).default([]),
    sizes: z.array(SizeSchema).min(1),
    /** Training tokens per cell, or training FLOPs (6·N_matmul + 12·L·d·T per token, as `ndbg model info`). */
    budgets: z.object({ kind: z.enum(['tokens', 'flops']), values: z.array(positive).min(1) }).strict(),
    seeds: z.array(z.number().int().min(0)).min(1).default([0]),
    /** peak_lr(size) = peak_lr · (reference_d_model / d_model)^exponent, unless the size states its own. */
    lr_rule: z
      .object({ peak_lr: positive, reference_d_model: z.number().int().positive(), exponent: z.number().min(0).default(0), min_lr_ratio: z.number().min(0).max(1).default(0.1) })
      .strict(),
    /** warmup_steps(cell) = clamp(round(fraction · steps), min_steps, max_steps), at most steps. */
    warmup_rule: z.object({ fraction: z.number().min(0).max(1), min_steps: z.number().int().min(0).default(0), max_steps: z.number().int().min(0).default(1_000_000) }).strict(),
    /** Checkpoint cadence of every cell (what a killed sweep resumes from). */
    checkpoint_every: z.number().int().min(1).default(50),
    /** Validation batches of the final evaluation (the loss the fit uses). */
    eval_batches: z.number().int().min(1).default(8),
    /** Steps in a cell at least this many (a budget too small for a size is an error, not a 0-step run). */
    min_steps: z.number().int().min(1).default(10),
    next_state_eval: NextStateEvalSchema.optional(),
  })
  .strict();

export type Grid = z.infer<typeof GridSchema>;

/** One run of the grid, with everything the sweep and the fit need to know before it trains. */
export interface Cell {
  id: string;
  size: string;
  budget: number;
  budgetKind: 'tokens' | 'flops';
  seed: number;
  steps: number;
  tokensPerStep: number;
  peakLr: number;
  warmupSteps: number;
  params: number;
  nonEmbeddingParams: number;
  trainFlopsPerToken: number;
  /** The tokenizer of the cell's data (its manifest's path, or "byte"). */
  tokenizer: string;
  /** Planned: steps × tokensPerStep and × trainFlopsPerToken. */
  tokens: number;
  flops: number;
  config: RunConfig;
}

export interface LoadedGrid {
  grid: Grid;
  file: string;
  cells: Cell[];
  /** next_state_eval with `programs` resolved against the grid file; absent when the grid has none. */
  nextStateEval?: NextStateEvalSpec;
}

/** `extraSet`: more `dotted.path=value` overrides after the grid's own (`ndbg sweep --set`). */
export function loadGrid(file: string, extraSet: string[] = []): LoadedGrid {
  if (!fs.existsSync(file)) throw new UserError(`sweep grid ${file} does not exist`);
  const grid = validateConfig(GridSchema, readJsonFile(file), file);
  const names = grid.sizes.map((s) => s.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new UserError(`invalid config ${file}:\n  sizes: the name "${dup}" is used twice`);
  const nse = grid.next_state_eval && { ...grid.next_state_eval, programs: path.resolve(path.dirname(file), grid.next_state_eval.programs) };
  if (nse && !(fs.existsSync(nse.programs) && fs.statSync(nse.programs).isFile())) {
    throw new UserError(`invalid config ${file}:\n  next_state_eval.programs: ${nse.programs} is not a file`);
  }
  const base = path.resolve(path.dirname(file), grid.base_config);
  if (!fs.existsSync(base)) throw new UserError(`invalid config ${file}:\n  base_config: ${base} does not exist`);
  const baseRaw = readJsonFile(base);
  for (const spec of [...grid.set, ...extraSet]) {
    const { path: p, value } = parseOverride(spec);
    applyOverride(baseRaw, p, value);
  }
  const cells: Cell[] = [];
  for (const size of grid.sizes) for (const budget of grid.budgets.values) for (const seed of grid.seeds) cells.push(makeCell(grid, file, baseRaw, size, budget, seed));
  // Found before any cell trains, not after the first: the eval reads a checkpoint's tokenizer as a sentencepiece model.
  const byte = nse && cells.find((c) => c.tokenizer === BYTE_TOKENIZER_NAME);
  if (byte) {
    throw new UserError(
      `invalid config ${file}:\n  next_state_eval: cell ${byte.id} trains on byte-tokenized data, which the next-state eval cannot load; ` +
        `build the data with a sentencepiece --tokenizer, or drop next_state_eval`,
    );
  }
  return { grid, file, cells, ...(nse ? { nextStateEval: nse } : {}) };
}

export function budgetLabel(kind: 'tokens' | 'flops', v: number): string {
  const [m, e] = v.toExponential(2).split('e');
  return `${kind === 'tokens' ? 'D' : 'C'}${Number(m)}e${Number(e)}`;
}

function makeCell(grid: Grid, file: string, baseRaw: Record<string, unknown>, size: Grid['sizes'][number], budget: number, seed: number): Cell {
  const id = `${size.name}-${budgetLabel(grid.budgets.kind, budget)}-s${seed}`;
  const raw = structuredClone(baseRaw) as Record<string, unknown> & { model?: Record<string, unknown>; train?: Record<string, unknown> };
  raw.model = { ...(raw.model ?? {}), ...size.model };
  const source = `${file} (cell ${id})`;
  // Validated once with a placeholder step count to learn the model and batch layout.
  raw.train = { ...(raw.train ?? {}), steps: 1, seed, max_minutes: null, checkpoint_every: grid.checkpoint_every, eval_batches: grid.eval_batches };
  raw.optim = { ...((raw.optim as Record<string, unknown>) ?? {}), schedule: { kind: 'constant', peak_lr: 1, warmup_steps: 0 } };
  const probe = resolveRun(validateConfig(RunConfigSchema, raw, source), source);
  const stats = modelStats(probe.model, probe.seqLen);
  const tokensPerStep = probe.config.train.micro_batch_size * probe.config.train.grad_accum * probe.seqLen;
  const wantTokens = grid.budgets.kind === 'tokens' ? budget : budget / stats.trainFlopsPerToken;
  const steps = Math.round(wantTokens / tokensPerStep);
  if (steps < grid.min_steps) {
    throw new UserError(
      `invalid config ${file}:\n  budgets.values: ${budget} ${grid.budgets.kind} gives size "${size.name}" only ${steps} steps of ${tokensPerStep} tokens ` +
        `(min_steps ${grid.min_steps}); raise the budget or drop the size`,
    );
  }
  const peakLr = size.peak_lr ?? grid.lr_rule.peak_lr * (grid.lr_rule.reference_d_model / probe.model.d_model) ** grid.lr_rule.exponent;
  const wr = grid.warmup_rule;
  const warmupSteps = Math.min(steps, size.warmup_steps ?? Math.min(wr.max_steps, Math.max(wr.min_steps, Math.round(wr.fraction * steps))));
  raw.train = { ...raw.train, steps, eval_every: steps };
  raw.optim = { ...(raw.optim as Record<string, unknown>), schedule: { kind: 'cosine', peak_lr: peakLr, warmup_steps: warmupSteps, min_lr: peakLr * grid.lr_rule.min_lr_ratio } };
  const config = validateConfig(RunConfigSchema, raw, source);
  const tokens = steps * tokensPerStep;
  return {
    id,
    size: size.name,
    budget,
    budgetKind: grid.budgets.kind,
    seed,
    steps,
    tokensPerStep,
    peakLr,
    warmupSteps,
    params: stats.params,
    nonEmbeddingParams: stats.nonEmbeddingParams,
    trainFlopsPerToken: stats.trainFlopsPerToken,
    tokenizer: probe.manifest.tokenizer.path,
    tokens,
    flops: tokens * stats.trainFlopsPerToken,
    config,
  };
}

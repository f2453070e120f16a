import * as fs from 'fs';
import * as path from 'path';
import { readMetrics } from '../train/metrics';
import { UserError } from '../util/errors';
import { replaceFileAtomic } from '../util/fsync';
import type { CellEval } from './cell_eval';
import type { Cell } from './grid';

/**
 * A sweep directory:
 *   manifest.json      the grid's cells as planned (sizes, budgets, steps, LR, FLOPs); identical
 *                      for every shard, so shards may all write it
 *   configs/ID.json    each cell's full run config (what `ndbg train --config` would read)
 *   runs/ID/           each cell's ordinary run directory (checkpoints, metrics.jsonl, config.json)
 *   cells/ID.json      each cell's status and, once done, its results and (with the grid's
 *                      next_state_eval) its eval; written only by the shard that owns the
 *                      cell, atomically
 *   results.json       `ndbg sweep --collect`: the manifest with every cell's status and results
 */
export const MANIFEST = 'manifest.json';
export const RESULTS = 'results.json';

export interface PlannedCell {
  id: string;
  size: string;
  budget: number;
  budget_kind: 'tokens' | 'flops';
  seed: number;
  steps: number;
  tokens_per_step: number;
  peak_lr: number;
  warmup_steps: number;
  params: number;
  non_embedding_params: number;
  train_flops_per_token: number;
  planned_tokens: number;
  planned_flops: number;
}

export interface CellResult {
  /** Mean train loss of the last tenth of the steps (at least one): less noisy than the last step. */
  train_loss: number;
  final_step_loss: number;
  val_loss: number | null;
  steps: number;
  tokens: number;
  /** tokens × train FLOPs per token (the formula `ndbg model info` prints). */
  flops: number;
  /** Training wall seconds, all processes of the run together. */
  wall_s: number;
}

export interface CellStatus {
  id: string;
  status: 'running' | 'done' | 'failed';
  shard: string;
  updated: string;
  error?: string;
  result?: CellResult;
  /** The next-state eval of the cell's last checkpoint (cell_eval.ts). */
  next_state?: CellEval;
}

export interface Manifest {
  format: 'ndbg-sweep/1';
  name: string;
  grid: string;
  cells: PlannedCell[];
}

export const cellRunDir = (sweep: string, id: string) => path.join(sweep, 'runs', id);
export const cellConfigFile = (sweep: string, id: string) => path.join(sweep, 'configs', `${id}.json`);
const cellStatusFile = (sweep: string, id: string) => path.join(sweep, 'cells', `${id}.json`);

export function plannedCell(c: Cell): PlannedCell {
  return {
    id: c.id,
    size: c.size,
    budget: c.budget,
    budget_kind: c.budgetKind,
    seed: c.seed,
    steps: c.steps,
    tokens_per_step: c.tokensPerStep,
    peak_lr: c.peakLr,
    warmup_steps: c.warmupSteps,
    params: c.params,
    non_embedding_params: c.nonEmbeddingParams,
    train_flops_per_token: c.trainFlopsPerToken,
    planned_tokens: c.tokens,
    planned_flops: c.flops,
  };
}

export function writeManifest(sweep: string, m: Manifest): void {
  fs.mkdirSync(sweep, { recursive: true });
  replaceFileAtomic(path.join(sweep, MANIFEST), JSON.stringify(m, null, 1) + '\n');
}

export function readManifest(sweep: string): Manifest {
  const file = path.join(sweep, MANIFEST);
  if (!fs.existsSync(file)) throw new UserError(`${sweep} is not a sweep directory (no ${MANIFEST}; run \`ndbg sweep GRID.json --out ${sweep}\` first)`);
  const m = readJson(file) as Manifest;
  if (m?.format !== 'ndbg-sweep/1' || !Array.isArray(m.cells)) throw new UserError(`${file}: not an ndbg sweep manifest (format ${JSON.stringify(m?.format)})`);
  return m;
}

/**
 * Writes a cell's run config, or checks it against the one already there: a cell that has
 * started trains under one config for good (a changed grid makes new cells, never mixed runs).
 */
export function claimCellConfig(sweep: string, c: Cell): void {
  const file = cellConfigFile(sweep, c.id);
  const text = JSON.stringify(c.config, null, 2) + '\n';
  if (fs.existsSync(file)) {
    if (fs.readFileSync(file, 'utf8') !== text) {
      throw new UserError(
        `cell ${c.id}: its run config differs from ${file}, written when the cell was first started; ` +
          `the grid changed under an existing cell: restore it, or sweep into a new --out`,
      );
    }
    return;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  replaceFileAtomic(file, text);
}

export function readCellStatus(sweep: string, id: string): CellStatus | undefined {
  const file = cellStatusFile(sweep, id);
  return fs.existsSync(file) ? (readJson(file) as CellStatus) : undefined;
}

export function writeCellStatus(sweep: string, s: Omit<CellStatus, 'updated'>): void {
  const file = cellStatusFile(sweep, s.id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  replaceFileAtomic(file, JSON.stringify({ ...s, updated: new Date().toISOString() }, null, 1) + '\n');
}

/** A finished cell's numbers, from its metrics.jsonl (so they do not depend on which process finished it). */
export function cellResult(runDir: string, trainFlopsPerToken: number): CellResult {
  const m = readMetrics(path.join(runDir, 'metrics.jsonl'));
  if (m.length === 0) throw new UserError(`${runDir}/metrics.jsonl is empty`);
  const last = m[m.length - 1];
  const tail = m.slice(-Math.max(1, Math.round(m.length / 10))).filter((r) => Number.isFinite(r.loss));
  const val = [...m].reverse().find((r) => r.val_loss !== undefined)?.val_loss;
  return {
    train_loss: tail.reduce((a, r) => a + r.loss, 0) / Math.max(1, tail.length),
    final_step_loss: last.loss,
    val_loss: val ?? null,
    steps: last.step,
    tokens: last.tokens_seen,
    flops: last.tokens_seen * trainFlopsPerToken,
    wall_s: last.elapsed_s,
  };
}

export interface CollectedCell extends PlannedCell {
  status: 'pending' | CellStatus['status'];
  error?: string;
  result?: CellResult;
  next_state?: CellEval;
}

export interface SweepResults {
  format: 'ndbg-sweep-results/1';
  name: string;
  counts: Record<CollectedCell['status'], number>;
  cells: CollectedCell[];
}

/** Every cell of the manifest with its status: what `--collect` writes and `scaling fit` reads. */
export function collectResults(sweep: string): SweepResults {
  const m = readManifest(sweep);
  const counts = { pending: 0, running: 0, done: 0, failed: 0 };
  const cells = m.cells.map((c): CollectedCell => {
    const s = readCellStatus(sweep, c.id);
    const status = s?.status ?? 'pending';
    counts[status] += 1;
    return { ...c, status, ...(s?.error ? { error: s.error } : {}), ...(s?.result ? { result: s.result } : {}), ...(s?.next_state ? { next_state: s.next_state } : {}) };
  });
  return { format: 'ndbg-sweep-results/1', name: m.name, counts, cells };
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

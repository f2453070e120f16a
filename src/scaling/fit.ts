import { UserError } from '../util/errors';
import { approach2, type Approach2 } from './isoflop';
import { allocationExponents, computeOptimal, fitFlopsModel, type Allocation, type FlopsModel } from './frontier';
import { bootstrapLaw, fitLaw, HUBER_DELTA, percentileInterval, predictLoss, type Interval, type Law, type Point } from './law';
import type { CellEval } from './cell_eval';
import type { CollectedCell, SweepResults } from './sweep_dir';

/** `ndbg scaling fit SWEEP`: the sweep's done cells → both approaches, intervals, predictions (scaling.json). */
export const PUBLISHED = {
  chinchilla: { label: 'Chinchilla (Hoffmann et al. 2022)', alpha: 0.34, beta: 0.28, E: 1.69, A: 406.4, B: 410.7 },
  replication: { label: 'Replication (Besiroglu et al. 2024)', alpha: 0.35, beta: 0.37, E: 1.82, A: 482.01, B: 2085.43 },
};

export interface FitOptions {
  loss: 'val' | 'train';
  params: 'non_embedding' | 'total';
  bootstrap: number;
  seed: number;
  /** A cell left out of the fit and predicted (the acceptance check). */
  holdout?: string;
  /** Starting points of the fit (default: Hoffmann et al.'s grid of 4,500). */
  starts?: number[][];
}

export interface FitPoint extends Point {
  id: string;
  size: string;
  flops: number;
  flopsPerToken: number;
  budget: number;
  budgetKind: 'tokens' | 'flops';
}

/** A done cell's next-state eval, placed by its training compute (held-out cells included: the eval is no part of the fit). */
export interface EvalPoint {
  id: string;
  size: string;
  N: number;
  flops: number;
  next_state: CellEval;
}

export interface ScalingFit {
  format: 'ndbg-scaling-fit/1';
  sweep: string;
  loss: FitOptions['loss'];
  params: FitOptions['params'];
  points: FitPoint[];
  skipped: Array<{ id: string; why: string }>;
  approach3: {
    law: Law;
    ci: Record<keyof Law, Interval>;
    level: number;
    huber_delta: number;
    starts: number;
    objective: number;
    bootstrap: { samples: number; seed: number };
    allocation: { a: number; b: number; a_ci: Interval; b_ci: Interval };
  };
  approach2?: Approach2;
  flops_model: FlopsModel;
  compute_optimal: Array<Allocation & { loss_ci: Interval; N_ci: Interval }>;
  holdout?: { id: string; N: number; D: number; predicted: number; ci: Interval; measured: number | null; error_pct: number | null };
  published: typeof PUBLISHED;
  /** Bootstrap laws, so predictions at new (N, D) or C can carry intervals later. */
  bootstrap_laws: Law[];
  /** Present when some done cell carries a next-state eval (grid `next_state_eval`). */
  next_state?: EvalPoint[];
}

function pointOf(c: CollectedCell, o: FitOptions): FitPoint | { why: string } {
  if (c.status !== 'done' || !c.result) return { why: `status ${c.status}` };
  const loss = o.loss === 'val' ? c.result.val_loss : c.result.train_loss;
  if (loss === null || !Number.isFinite(loss)) return { why: `no ${o.loss} loss` };
  const N = o.params === 'total' ? c.params : c.non_embedding_params;
  return { id: c.id, size: c.size, N, D: c.result.tokens, loss, flops: c.result.flops, flopsPerToken: c.train_flops_per_token, budget: c.budget, budgetKind: c.budget_kind };
}

export function fitSweep(results: SweepResults, sweep: string, o: FitOptions): ScalingFit {
  const points: FitPoint[] = [];
  const skipped: Array<{ id: string; why: string }> = [];
  let held: FitPoint | undefined;
  let heldCell: CollectedCell | undefined;
  if (o.holdout !== undefined && !results.cells.some((c) => c.id === o.holdout)) {
    throw new UserError(`--holdout ${o.holdout}: no such cell in ${sweep} (cells: ${results.cells.map((c) => c.id).join(', ')})`);
  }
  for (const c of results.cells) {
    const p = pointOf(c, o);
    if (c.id === o.holdout) {
      heldCell = c;
      if (!('why' in p)) held = p;
      continue;
    }
    if ('why' in p) skipped.push({ id: c.id, why: p.why });
    else points.push(p);
  }
  const sizes = new Set(points.map((p) => p.size));
  if (points.length < 6 || sizes.size < 2) {
    throw new UserError(`${sweep}: ${points.length} finished cells over ${sizes.size} sizes; the law needs at least 6 cells and 2 sizes (${results.counts.pending} pending, ${results.counts.failed} failed)`);
  }
  const full = fitLaw(points, o.starts);
  const boot = bootstrapLaw(points, full, { samples: o.bootstrap, seed: o.seed });
  const alloc = allocationExponents(full.law);
  const bootAlloc = boot.samples.map(allocationExponents);
  const perSize = [...new Map(points.map((p) => [p.N, p.flopsPerToken])).entries()].map(([N, f]) => ({ N, flopsPerToken: f }));
  const fm = fitFlopsModel(perSize);
  const cMin = Math.min(...points.map((p) => p.flops));
  const cMax = Math.max(...points.map((p) => p.flops));
  const budgets: number[] = [];
  for (let e = Math.floor(Math.log10(cMin)); e <= Math.ceil(Math.log10(cMax)) + 2; e++) budgets.push(10 ** e);
  const computeOpt = budgets.map((C) => {
    const a = computeOptimal(full.law, fm, C);
    const bs = boot.samples.map((l) => computeOptimal(l, fm, C));
    return { ...a, loss_ci: percentileInterval(bs.map((b) => b.loss), boot.level), N_ci: percentileInterval(bs.map((b) => b.N), boot.level) };
  });
  const out: ScalingFit = {
    format: 'ndbg-scaling-fit/1',
    sweep,
    loss: o.loss,
    params: o.params,
    points,
    skipped,
    approach3: {
      law: full.law,
      ci: boot.ci,
      level: boot.level,
      huber_delta: HUBER_DELTA,
      starts: full.starts,
      objective: full.objective,
      bootstrap: { samples: o.bootstrap, seed: o.seed },
      allocation: { ...alloc, a_ci: percentileInterval(bootAlloc.map((x) => x.a), boot.level), b_ci: percentileInterval(bootAlloc.map((x) => x.b), boot.level) },
    },
    flops_model: fm,
    compute_optimal: computeOpt,
    published: PUBLISHED,
    bootstrap_laws: boot.samples,
  };
  const evals = evalPoints(results.cells, o);
  if (evals.length) out.next_state = evals;
  const iso = isoSlices(points);
  if (iso.length) out.approach2 = approach2(iso);
  if (heldCell) {
    const N = o.params === 'total' ? heldCell.params : heldCell.non_embedding_params;
    const D = held?.D ?? heldCell.planned_tokens;
    const predicted = predictLoss(full.law, N, D);
    const measured = held?.loss ?? null;
    out.holdout = {
      id: heldCell.id,
      N,
      D,
      predicted,
      ci: percentileInterval(boot.samples.map((l) => predictLoss(l, N, D)), boot.level),
      measured,
      error_pct: measured === null ? null : (100 * (predicted - measured)) / measured,
    };
  }
  return out;
}

function evalPoints(cells: CollectedCell[], o: FitOptions): EvalPoint[] {
  return cells
    .filter((c) => c.status === 'done' && c.result && c.next_state)
    .map((c) => ({ id: c.id, size: c.size, N: o.params === 'total' ? c.params : c.non_embedding_params, flops: c.result!.flops, next_state: c.next_state! }));
}

/** Cells planned with the same FLOP budget form an iso-FLOP slice (token-budget grids have none). */
function isoSlices(points: FitPoint[]): Array<{ C: number; points: Array<{ N: number; loss: number; flopsPerToken: number }> }> {
  const by = new Map<number, FitPoint[]>();
  for (const p of points) if (p.budgetKind === 'flops') by.set(p.budget, [...(by.get(p.budget) ?? []), p]);
  return [...by.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([C, ps]) => {
      // Seeds of one size at one budget are averaged into one point of the slice.
      const perN = new Map<number, FitPoint[]>();
      for (const p of ps) perN.set(p.N, [...(perN.get(p.N) ?? []), p]);
      return { C, points: [...perN.entries()].map(([N, q]) => ({ N, loss: q.reduce((a, x) => a + x.loss, 0) / q.length, flopsPerToken: q[0].flopsPerToken })) };
    });
}

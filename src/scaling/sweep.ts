import * as path from 'path';
import { trainFromConfig } from '../train/run';
import { isUserError, UserError } from '../util/errors';
import { formatShard, type ShardSpec } from '../util/shard';
import { loadGrid, type Cell } from './grid';
import { cellsOfShard } from './partition';
import { cellConfigFile, cellResult, cellRunDir, claimCellConfig, plannedCell, readCellStatus, writeCellStatus, writeManifest } from './sweep_dir';
import { SweepEvaluator } from './sweep_eval';

/**
 * `ndbg sweep GRID.json`: trains this shard's cells one after another. Rerunning the same
 * command skips done cells and resumes an interrupted one from its latest checkpoint through
 * the trainer's own --resume (exact: same losses, same weights). Every cell's config is built
 * and validated before the first step of any, so a bad grid fails before work starts.
 * With the grid's `next_state_eval`, each cell's last checkpoint is evaluated right after it
 * trains (and cells trained before the field was added, on the next run); `evalOnly` trains
 * nothing and only evaluates.
 */
export interface SweepOptions {
  grid: string;
  out: string;
  shard: ShardSpec;
  /** Overrides of every cell's config after the grid's `set` (e.g. where the data is on this machine). */
  set?: string[];
  quiet?: boolean;
  /** Train nothing: evaluate this shard's done cells that lack the grid's next-state eval. */
  evalOnly?: boolean;
  log?: (line: string) => void;
}

export interface SweepOutcome {
  mine: number;
  skipped: string[];
  trained: string[];
  failed: Array<{ id: string; error: string }>;
  /** A signal stopped the current cell after a checkpoint; the rest were not started. */
  interrupted?: string;
  /** Cells whose next-state eval was run now, and those whose record already held it. */
  evaluated: string[];
  evalSkipped: string[];
  /** evalOnly: cells of this shard not (yet) trained, so not evaluated. */
  notTrained: string[];
}

export async function runSweep(o: SweepOptions): Promise<SweepOutcome> {
  const log = o.log ?? ((s: string) => process.stderr.write(s + '\n'));
  const { grid, cells, nextStateEval } = loadGrid(o.grid, o.set);
  if (o.evalOnly && !nextStateEval) throw new UserError(`--eval-only: ${o.grid} has no "next_state_eval" field to evaluate with (docs/scaling.md)`);
  writeManifest(o.out, { format: 'ndbg-sweep/1', name: grid.name, grid: path.resolve(o.grid), cells: cells.map(plannedCell) });
  const mine = cellsOfShard(cells, o.shard);
  for (const c of mine) claimCellConfig(o.out, c);
  const shard = formatShard(o.shard);
  const outcome: SweepOutcome = { mine: mine.length, skipped: [], trained: [], failed: [], evaluated: [], evalSkipped: [], notTrained: [] };
  const evaluator = nextStateEval && new SweepEvaluator(o.out, nextStateEval, { quiet: o.quiet, log });
  log(`sweep ${grid.name}: ${cells.length} cells, ${mine.length} in shard ${shard} → ${o.out}${o.evalOnly ? ' (eval only)' : ''}`);
  for (const [i, c] of mine.entries()) {
    const done = readCellStatus(o.out, c.id)?.status === 'done';
    if (o.evalOnly && !done) {
      outcome.notTrained.push(c.id);
      continue;
    }
    if (done) outcome.skipped.push(c.id);
    else {
      log(`sweep: cell ${i + 1}/${mine.length} ${c.id}: ${c.steps} steps, ${c.tokens} tokens, ${c.flops.toExponential(2)} FLOPs, lr ${c.peakLr.toPrecision(3)}`);
      const r = await runCell(o, c, shard);
      if (r === 'interrupted') {
        outcome.interrupted = c.id;
        break;
      }
      if (r !== 'done') {
        outcome.failed.push({ id: c.id, error: r.error });
        continue;
      }
      outcome.trained.push(c.id);
    }
    // After training, so a kill during the eval never costs the cell's training.
    if (evaluator) ((await evaluator.evaluate(c)) === 'evaluated' ? outcome.evaluated : outcome.evalSkipped).push(c.id);
  }
  return outcome;
}

async function runCell(o: SweepOptions, c: Cell, shard: string): Promise<'done' | 'interrupted' | { error: string }> {
  const runDir = cellRunDir(o.out, c.id);
  writeCellStatus(o.out, { id: c.id, status: 'running', shard });
  try {
    // Always --resume: a cell with no checkpoint yet starts at step 0 (and drops any metrics of a run killed before its first checkpoint).
    const s = await trainFromConfig({ config: cellConfigFile(o.out, c.id), overrides: [], runDir, resume: true, quiet: o.quiet, log: o.log });
    if (s.stoppedBySignal) return 'interrupted';
  } catch (e) {
    // A cell that cannot train (NaN steps, a data problem) is recorded and the sweep goes on; anything else is a bug.
    if (!isUserError(e)) throw e;
    writeCellStatus(o.out, { id: c.id, status: 'failed', shard, error: (e as Error).message });
    return { error: (e as Error).message };
  }
  writeCellStatus(o.out, { id: c.id, status: 'done', shard, result: cellResult(runDir, c.trainFlopsPerToken) });
  return 'done';
}

/**
 * `ndbg eval next-state`: run predictors (the model and the naive baseline) over the same tasks
 * and tabulate exact-match rates per action and component.
 */
import { aggregate, ComponentRates, ratesByAction, ScoredTask, scorePrediction } from './score';
import type { FramePredictor, NextStateTask } from './types';
import { Progress } from '../util/progress';

export interface NextStateResult {
  /** predictor name → action kind (and 'all') → rates */
  tables: Record<string, Record<string, ComponentRates>>;
  scored: Record<string, ScoredTask[]>;
}

export async function evaluateNextState(
  tasks: NextStateTask[],
  predictors: FramePredictor[],
  options: { quiet?: boolean; /** From makeTasks: tasks per action that did not fit the context. */ didNotFit?: Record<string, number> } = {},
): Promise<NextStateResult> {
  const tables: NextStateResult['tables'] = {};
  const scored: NextStateResult['scored'] = {};
  for (const predictor of predictors) {
    const progress = new Progress(`eval ${predictor.name}`, tasks.length, process.stderr, options.quiet);
    const rows: ScoredTask[] = [];
    for (const task of tasks) {
      const prediction = await predictor.predict(task);
      rows.push({ task, prediction, scores: scorePrediction(prediction, task.truth) });
      progress.tick(1, { full: aggregate(rows.map((r) => r.scores)).full.toFixed(3) });
    }
    progress.finish();
    scored[predictor.name] = rows;
    tables[predictor.name] = ratesByAction(rows, options.didNotFit);
  }
  return { tables, scored };
}

const pct = (x: number | null) => (x === null ? '   -' : `${(100 * x).toFixed(1).padStart(5)}`);

/**
 * A plain-text table: one row per action (tasks scored, tasks that did not fit the context),
 * for each predictor the full-frame rate and the components, e.g. `step_into  n=40  model full 52.5 evt 90.0 ... | baseline full 20.0 ...`.
 */
export function formatTables(tables: NextStateResult['tables']): string {
  const names = Object.keys(tables);
  if (names.length === 0) return '(no results)';
  const actions = Object.keys(tables[names[0]]);
  const header = ['action'.padEnd(14), 'n'.padStart(5), 'no-fit'.padStart(6)];
  for (const name of names) header.push(`| ${name}: full   evt   src   arg locals`);
  const lines = [header.join(' ')];
  for (const action of actions) {
    const row = [action.padEnd(14), String(tables[names[0]][action].n).padStart(5), String(tables[names[0]][action].didNotFit ?? 0).padStart(6)];
    for (const name of names) {
      const r = tables[name][action];
      row.push(`| ${' '.repeat(name.length)}  ${pct(r.full)} ${pct(r.evt)} ${pct(r.src)} ${pct(r.arg)} ${pct(r.locals)}`);
    }
    lines.push(row.join(' '));
  }
  return lines.join('\n');
}

/** One component's rate per action (and 'all'), e.g. for a bar chart in the report. */
export function ratesOf(table: Record<string, ComponentRates>, component: 'full' | 'evt' | 'src' | 'arg'): Record<string, number> {
  return Object.fromEntries(Object.entries(table).map(([k, v]) => [k, v[component]]));
}

/**
 * The next_state.json document: per-action maps that `ndbg report` draws as bar charts
 * (full match for the predictor and the baseline, SRC and ARG for the predictor), plus the
 * full tables.
 */
export function nextStateReport(result: NextStateResult, predictor: string, meta: { programs: number; tasks: number }): Record<string, unknown> {
  const model = result.tables[predictor];
  return {
    title: 'Next-state accuracy (exact match, held-out programs)',
    ...meta,
    predictor,
    [`full_match_${predictor}`]: ratesOf(model, 'full'),
    ...(result.tables.baseline ? { full_match_baseline: ratesOf(result.tables.baseline, 'full') } : {}),
    [`src_${predictor}`]: ratesOf(model, 'src'),
    [`arg_${predictor}`]: ratesOf(model, 'arg'),
    // Tasks per action whose prompt and answer do not fit the model's context: not scored, shown.
    did_not_fit: Object.fromEntries(Object.entries(model).map(([k, v]) => [k, v.didNotFit ?? 0])),
    tables: result.tables,
  };
}

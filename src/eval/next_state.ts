/**
 * `ndbg eval next-state`: run predictors (the model, the rule baseline and the naive one) over
 * the same tasks and tabulate exact-match rates per action and component.
 */
import { aggregate, ComponentRates, ratesByAction, ScoredTask, scorePrediction } from './score';
import type { FramePredictor, NextStateTask } from './types';
import { indicesByKey } from '../util/group';
import { Progress } from '../util/progress';

export interface NextStateResult {
  /** predictor name → action kind (and 'all') → rates */
  tables: Record<string, Record<string, ComponentRates>>;
  scored: Record<string, ScoredTask[]>;
}

/**
 * Most tasks handed to a batching predictor at a time. Large, because a chunk's walked
 * breakpoints (jump_walk.ts) decode their steps together, a round per step: with chunks of 256
 * the rounds held a few walks each and the validation eval took 122 s, with 1,024 it took 105 s.
 */
const PREDICT_CHUNK = 1024;

/**
 * The chunks a batching predictor gets, as indices into `tasks`: the tasks grouped by action (in
 * the order the actions first appear), the groups packed in turn into chunks of at most
 * PREDICT_CHUNK (a larger group split). So every walked breakpoint of a chunk shares each round,
 * one action's prompts, alike in length, are sorted and batched together, and no small chunk
 * ends in a batch of a few prompts. On the test split's 2,399 held-out tasks (2 decode workers,
 * with model_completer.ts's lazy one-shot answers) chunks of 1,024 tasks in the sampled order
 * took 116 s, these 75 s; on the 815 mined-function tasks one chunk and these take the same
 * time, a chunk per action 12% more (docs/eval.md, "Session 36"). A task's answer does not depend on the
 * prompts decoded beside it (model/beam.ts), so the answers are the same.
 */
export function chunksByAction(tasks: readonly NextStateTask[]): number[][] {
  const chunks: number[][] = [];
  let chunk: number[] = [];
  for (const group of indicesByKey(tasks, (task) => task.action.kind)) {
    for (let i = 0; i < group.length; i += PREDICT_CHUNK) {
      const piece = group.slice(i, i + PREDICT_CHUNK);
      if (chunk.length + piece.length > PREDICT_CHUNK) {
        chunks.push(chunk);
        chunk = [];
      }
      chunk.push(...piece);
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
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
    // Rows in the tasks' order, whatever order the chunks are predicted in.
    const rows: ScoredTask[] = new Array(tasks.length);
    const done: ScoredTask[] = [];
    // Chunks keep the progress line moving while a model decodes each chunk as batches.
    const chunks = predictor.predictMany ? chunksByAction(tasks) : tasks.map((_, i) => [i]);
    for (const chunk of chunks) {
      const group = chunk.map((i) => tasks[i]);
      const predictions = predictor.predictMany ? await predictor.predictMany(group) : [await predictor.predict(group[0])];
      chunk.forEach((i, j) => {
        rows[i] = { task: tasks[i], prediction: predictions[j], scores: scorePrediction(predictions[j], tasks[i].truth) };
        done.push(rows[i]);
      });
      progress.tick(group.length, { full: aggregate(done.map((r) => r.scores)).full.toFixed(3) });
    }
    progress.finish();
    scored[predictor.name] = rows;
    tables[predictor.name] = ratesByAction(rows, options.didNotFit);
  }
  return { tables, scored };
}

const pct = (x: number | null) => (x === null ? '   -' : `${(100 * x).toFixed(1).padStart(5)}`);
const interval = ([lo, hi]: [number, number]) => `[${(100 * lo).toFixed(0)}-${(100 * hi).toFixed(0)}]`.padEnd(9);

/**
 * A plain-text table: one row per action (tasks scored, distinct programs they come from, tasks
 * that did not fit the context, the share whose answer is an exit), for each predictor the
 * full-frame rate with its 95% interval bootstrapped over programs, then the components, e.g.
 * `step_into  n=100 progs 68 ... | model full 52.5 [43-62] evt 90.0 ... | baseline full 20.0 ...`.
 */
export function formatTables(tables: NextStateResult['tables']): string {
  const names = Object.keys(tables);
  if (names.length === 0) return '(no results)';
  const actions = Object.keys(tables[names[0]]);
  const header = ['action'.padEnd(16), 'n'.padStart(5), 'progs'.padStart(5), 'no-fit'.padStart(6), 'exit%'.padStart(5)];
  for (const name of names) header.push(`| ${name}: full [95% CI]   evt   src [95% CI]   arg locals`);
  const lines = [header.join(' ')];
  for (const action of actions) {
    const first = tables[names[0]][action];
    const row = [action.padEnd(16), String(first.n).padStart(5), String(first.programs).padStart(5), String(first.didNotFit ?? 0).padStart(6), pct(first.exitShare)];
    for (const name of names) {
      const r = tables[name][action];
      row.push(`| ${' '.repeat(name.length)}  ${pct(r.full)} ${interval(r.ci.full)} ${pct(r.evt)} ${pct(r.src)} ${interval(r.ci.src)} ${pct(r.arg)} ${pct(r.locals)}`);
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
 * (full match for the predictor, the rule baseline and the naive one, SRC and ARG for the
 * predictor), plus the full tables (with each row's interval, programs and exit share).
 */
export function nextStateReport(result: NextStateResult, predictor: string, meta: { programs: number; tasks: number }): Record<string, unknown> {
  const model = result.tables[predictor];
  return {
    title: 'Next-state accuracy (exact match, held-out programs)',
    ...meta,
    predictor,
    [`full_match_${predictor}`]: ratesOf(model, 'full'),
    ...(result.tables.baseline ? { full_match_baseline: ratesOf(result.tables.baseline, 'full'), src_baseline: ratesOf(result.tables.baseline, 'src') } : {}),
    ...(result.tables.naive ? { full_match_naive: ratesOf(result.tables.naive, 'full') } : {}),
    [`src_${predictor}`]: ratesOf(model, 'src'),
    [`arg_${predictor}`]: ratesOf(model, 'arg'),
    // Tasks per action whose prompt and answer do not fit the model's context: not scored, shown.
    did_not_fit: Object.fromEntries(Object.entries(model).map(([k, v]) => [k, v.didNotFit ?? 0])),
    tables: result.tables,
  };
}

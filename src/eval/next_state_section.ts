/**
 * One next-state section of an evaluation: tasks drawn from a set of traces (every action, one
 * per program), the model beside the rule baseline and the naive one, written as
 * `next_state{suffix}.json` with its per-task samples. The held-out generated programs, the
 * mined real functions and the CruxEval sample are each one.
 */
import * as path from 'path';
import type { TraceRecord } from '../trace/types';
import { NaiveBaseline, RuleBaseline } from './baseline';
import { CompleterPredictor, type TextCompleter } from './completer';
import { writeJson } from './load';
import { evaluateNextState, nextStateReport, type NextStateResult } from './next_state';
import { writeNextStateSamples } from './samples';
import { ALL_ACTIONS, makeTasks } from './tasks';

export interface NextStateSection {
  result: NextStateResult;
  /** Tasks scored, and drawn but not fitting the context. */
  tasks: { scored: number; didNotFit: number };
}

export interface SectionOptions {
  seed: number;
  evalDir: string;
  /** `''` → next_state.json; `'_cruxeval'` → next_state_cruxeval.json (and `..._samples.jsonl`). */
  suffix: string;
  /** Extra top-level fields of the JSON (a title, a level). */
  meta?: Record<string, unknown>;
  /** Further completers scored beside `completer` (the free-SRC decoding). */
  alsoModels?: TextCompleter[];
}

export async function nextStateSection(traces: TraceRecord[], completer: TextCompleter, o: SectionOptions): Promise<NextStateSection> {
  const { tasks, didNotFit } = makeTasks(traces, ALL_ACTIONS, { seed: o.seed, perProgram: 1, budget: completer.budget });
  const models = [completer, ...(o.alsoModels ?? [])];
  const result = await evaluateNextState(tasks, [...models.map((m) => new CompleterPredictor(m)), new RuleBaseline(), new NaiveBaseline()], { didNotFit });
  writeJson(path.join(o.evalDir, `next_state${o.suffix}.json`), { ...nextStateReport(result, completer.name, { programs: traces.length, tasks: tasks.length }), ...o.meta });
  writeNextStateSamples(path.join(o.evalDir, `next_state${o.suffix}_samples.jsonl`), result);
  return { result, tasks: { scored: tasks.length, didNotFit: Object.values(didNotFit).reduce((a, b) => a + b, 0) } };
}

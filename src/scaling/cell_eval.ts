import * as fs from 'fs';
import * as path from 'path';
import { RuleBaseline } from '../eval/baseline';
import { CompleterPredictor } from '../eval/completer';
import { loadModelCompleter, writeJson } from '../eval/load';
import { DEFAULT_BEAMS } from '../eval/model_completer';
import { evaluateNextState, nextStateReport } from '../eval/next_state';
import { writeNextStateSamples } from '../eval/samples';
import type { ComponentRates } from '../eval/score';
import { ALL_ACTIONS, makeTasks } from '../eval/tasks';
import type { ActionKind } from '../ndl/tokens';
import { latestCheckpoint } from '../train/checkpoint_dir';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import type { Cell, NextStateEvalSpec } from './grid';

/**
 * The next-state eval of one cell's last checkpoint, as `ndbg eval next-state` scores it (the
 * model beside the rule baseline, same tasks), boiled down to what a scaling plot needs: the
 * full-frame exact-match rate overall and per action. The full tables also go to the cell's
 * run directory (runs/ID/eval/next_state.json), where `ndbg report RUN` finds them.
 */

/** What was evaluated; an eval recorded under other settings is stale and is redone. */
export interface CellEvalSettings {
  programs_sha256: string;
  max_programs: number | null;
  per_program: number;
  actions: ActionKind[];
  seed: number;
  max_new_tokens: number;
  src_constraint: boolean;
  /**
   * How the answers were decoded (CELL_DECODING); absent in evals recorded before session 25,
   * which are stale for that reason alone: their decoding is not this one.
   */
  decoding?: string;
}

/** The decoding of every cell eval: the model completer's defaults (model_completer.ts, frame_grammar.ts). */
export const CELL_DECODING = `${DEFAULT_BEAMS}-beam search, event first, frame grammar, breakpoints walked`;

export interface CellEvalRow {
  /** Tasks scored, and the distinct programs they come from. */
  n: number;
  programs: number;
  /** Tasks drawn whose prompt and answer do not fit the checkpoint's context (not scored). */
  did_not_fit: number;
  /** Full-frame exact match (EVT, SRC and ARG all right). */
  model: number;
  /** 95% interval of `model`, bootstrapped over programs. */
  model_ci: [number, number];
  /** The rule baseline on the same tasks (eval/baseline.ts). */
  baseline: number;
}

export interface CellEval {
  /** Relative to the sweep directory. */
  checkpoint: string;
  step: number;
  /** The held-out file as resolved when evaluated (for the reader; `settings` identifies it). */
  programs_file: string;
  settings: CellEvalSettings;
  tasks: number;
  programs: number;
  did_not_fit: number;
  overall: CellEvalRow;
  per_action: Record<string, CellEvalRow>;
  wall_s: number;
}

export function cellEvalSettings(spec: NextStateEvalSpec, programsSha256: string): CellEvalSettings {
  return {
    programs_sha256: programsSha256,
    max_programs: spec.max_programs ?? null,
    per_program: spec.per_program,
    actions: spec.actions === 'all' ? [...ALL_ACTIONS] : spec.actions,
    seed: spec.seed,
    max_new_tokens: spec.max_new_tokens,
    src_constraint: spec.src_constraint,
    decoding: CELL_DECODING,
  };
}

export function sameSettings(a: CellEvalSettings, b: CellEvalSettings): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export async function evaluateCell(
  o: { sweep: string; runDir: string; cell: Cell; spec: NextStateEvalSpec; settings: CellEvalSettings; traces: TraceRecord[]; quiet?: boolean },
): Promise<CellEval> {
  const started = Date.now();
  const ckpt = latestCheckpoint(o.runDir);
  if (!ckpt) throw new UserError(`cell ${o.cell.id}: next_state_eval: no complete checkpoint in ${o.runDir}`);
  const completer = await loadModelCompleter({
    checkpoint: ckpt.dir,
    backend: o.spec.backend ?? o.cell.config.train.backend,
    maxNewTokens: o.settings.max_new_tokens,
    constrainSrc: o.settings.src_constraint,
    batchSize: o.spec.batch_size,
  }).catch((e: unknown) => {
    throw e instanceof UserError ? new UserError(`cell ${o.cell.id}: next_state_eval: ${e.message}`) : e;
  });
  try {
    // Tasks depend on the checkpoint's context and tokenizer (what fits), so they are drawn per cell.
    const { tasks, didNotFit } = makeTasks(o.traces, o.settings.actions, { seed: o.settings.seed, perProgram: o.settings.per_program, budget: completer.budget });
    const result = await evaluateNextState(tasks, [new CompleterPredictor(completer), new RuleBaseline()], { quiet: o.quiet, didNotFit });
    const evalDir = path.join(o.runDir, 'eval');
    fs.mkdirSync(evalDir, { recursive: true });
    writeJson(path.join(evalDir, 'next_state.json'), nextStateReport(result, completer.name, { programs: o.traces.length, tasks: tasks.length }));
    writeNextStateSamples(path.join(evalDir, 'next_state_samples.jsonl'), result);
    const model = result.tables[completer.name];
    const rule = result.tables.baseline;
    const row = (k: string): CellEvalRow => rowOf(model[k], rule[k]);
    const actions = Object.keys(model).filter((k) => (ALL_ACTIONS as readonly string[]).includes(k));
    return {
      checkpoint: path.relative(o.sweep, ckpt.dir),
      step: ckpt.step,
      programs_file: o.spec.programs,
      settings: o.settings,
      tasks: tasks.length,
      programs: model.all.programs,
      did_not_fit: model.all.didNotFit,
      overall: row('all'),
      per_action: Object.fromEntries(actions.map((k) => [k, row(k)])),
      wall_s: (Date.now() - started) / 1000,
    };
  } finally {
    completer.model.dispose();
  }
}

function rowOf(m: ComponentRates, b: ComponentRates): CellEvalRow {
  return { n: m.n, programs: m.programs, did_not_fit: m.didNotFit, model: m.full, model_ci: m.ci.full, baseline: b.full };
}

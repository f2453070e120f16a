import type { TraceRecord } from '../trace/types';
import { cellEvalSettings, evaluateCell, sameSettings, type CellEvalSettings } from './cell_eval';
import { fileSha256, loadEvalTraces } from './eval_programs';
import type { Cell, NextStateEvalSpec } from './grid';
import { cellRunDir, readCellStatus, writeCellStatus } from './sweep_dir';

/**
 * The sweep's eval pass over its finished cells. A cell's eval lands in its cell record in one
 * atomic write, so a sweep killed mid-eval redoes only that cell's eval on the next run, and a
 * recorded eval under the same settings is never redone. The held-out set is traced once per
 * process, and only when some cell needs it.
 */
export class SweepEvaluator {
  private traces?: Promise<TraceRecord[]>;
  private readonly settings: CellEvalSettings;

  constructor(
    private readonly sweep: string,
    private readonly spec: NextStateEvalSpec,
    private readonly o: { quiet?: boolean; log: (line: string) => void },
  ) {
    this.settings = cellEvalSettings(spec, fileSha256(spec.programs));
  }

  /** Evaluates a done cell unless its record already holds this eval. */
  async evaluate(c: Cell): Promise<'evaluated' | 'skipped'> {
    const status = readCellStatus(this.sweep, c.id);
    if (status?.status !== 'done') throw new Error(`SweepEvaluator: cell ${c.id} is not done`);
    if (status.next_state && sameSettings(status.next_state.settings, this.settings)) return 'skipped';
    if (status.next_state) this.o.log(`sweep: cell ${c.id}: next_state_eval changed since its eval; evaluating again`);
    this.traces ??= loadEvalTraces(this.spec.programs, { limit: this.spec.max_programs, workers: this.spec.workers, quiet: this.o.quiet });
    const traces = await this.traces;
    this.o.log(`sweep: cell ${c.id}: next-state eval on ${traces.length} programs`);
    const next_state = await evaluateCell({ sweep: this.sweep, runDir: cellRunDir(this.sweep, c.id), cell: c, spec: this.spec, settings: this.settings, traces, quiet: this.o.quiet });
    writeCellStatus(this.sweep, { ...status, next_state });
    const pct = (x: number) => (100 * x).toFixed(1);
    this.o.log(`sweep: cell ${c.id}: next-state full match ${pct(next_state.overall.model)}% (rule baseline ${pct(next_state.overall.baseline)}%) on ${next_state.tasks} tasks`);
    return 'evaluated';
  }
}

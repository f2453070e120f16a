import { NaiveBaseline, OraclePredictor } from '../../src/eval/baseline';
import { evaluateNextState, formatTables } from '../../src/eval/next_state';
import { scorePrediction } from '../../src/eval/score';
import { ALL_ACTIONS, makeTasks } from '../../src/eval/tasks';
import type { FramePredictor, NextStateTask, Prediction } from '../../src/eval/types';
import { parseNextFrame } from '../../src/ndl/parse';
import { defaultSamplerConfig } from '../../src/ndl/config';
import { entryCallIndex } from '../../src/ndl/sampler';
import { fixtureTraces } from './helpers';

const options = { seed: 1, perProgram: 3, maxPrefixFrames: 12 };

/** Corrupts the SRC of every 2nd frame task and the ARG of every 3rd (by position). */
class CorruptingPredictor implements FramePredictor {
  readonly name = 'corrupt';
  private i = 0;
  async predict(task: NextStateTask): Promise<Prediction> {
    const k = this.i++;
    if (!task.truth.frame) return task.truth;
    const frame = { ...task.truth.frame };
    if (k % 2 === 0) frame.src = frame.src + ' # wrong';
    if (k % 3 === 0) {
      if (frame.value !== undefined) frame.value = JSON.stringify('wrong');
      else {
        frame.shown = [...(frame.shown ?? []), ['zz_wrong', "'?'"]];
        frame.locals = { ...frame.locals, zz_wrong: "'?'" };
      }
    }
    return { frame };
  }
}

describe('next-state scoring', () => {
  const { tasks } = makeTasks(fixtureTraces(), ALL_ACTIONS, options);

  it('builds tasks for every action kind, deterministically', () => {
    const kinds = new Set(tasks.map((t) => t.action.kind));
    for (const k of ALL_ACTIONS) expect(kinds).toContain(k);
    const { tasks: again } = makeTasks(fixtureTraces(), ALL_ACTIONS, options);
    expect(again.map((t) => t.prefix + JSON.stringify(t.truth))).toEqual(tasks.map((t) => t.prefix + JSON.stringify(t.truth)));
  });

  it('takes the action under test from the entry function\'s call on, never in the harness main (where documents only step_into)', () => {
    const inMain = (t: NextStateTask) => t.node < entryCallIndex(t.tree);
    const forward = makeTasks(fixtureTraces(), ['step_into', 'step_over', 'step_return', 'continue'], { ...options, perProgram: 10 }).tasks;
    expect(forward.length).toBeGreaterThan(0);
    expect(forward.some(inMain)).toBe(false);
    // With enterEntry off the policy draws in main as well, and so does the eval.
    const free = makeTasks(fixtureTraces(), ['step_over'], { ...options, perProgram: 20, sampler: { ...defaultSamplerConfig(), enterEntry: false } }).tasks;
    expect(free.some(inMain)).toBe(true);
  });

  it('cuts each prefix right after the action under test', () => {
    for (const task of tasks) {
      const tail = `<|action_sep|><|${task.action.kind}|>${task.action.target ?? ''}`;
      expect(task.prefix.endsWith(tail)).toBe(true);
      if (task.truth.exit !== undefined) {
        const exitToken = task.truth.exit === 'inv_exit_entry' ? '<|inv_exit_entry|>' : `<|exit_${task.truth.exit}|>`;
        expect(parseNextFrame(task.prefix, `<|frame_sep|>${exitToken}`)).toEqual({ ok: true, exit: task.truth.exit });
      }
    }
  });

  it('scores the oracle 100% in every component and action', async () => {
    const { tables } = await evaluateNextState(tasks, [new OraclePredictor()], { quiet: true });
    for (const rates of Object.values(tables.oracle)) {
      expect(rates.full).toBe(1);
      expect(rates.evt).toBe(1);
      expect(rates.src).toBe(1);
      expect(rates.arg).toBe(1);
      if (rates.locals !== null) expect(rates.locals).toBe(1);
    }
  });

  it('scores corrupted frames exactly at the expected fractions', async () => {
    const { tables } = await evaluateNextState(tasks, [new CorruptingPredictor()], { quiet: true });
    let srcWrong = 0;
    let argWrong = 0;
    let anyWrong = 0;
    tasks.forEach((t, k) => {
      if (!t.truth.frame) return;
      const s = k % 2 === 0;
      const a = k % 3 === 0;
      srcWrong += s ? 1 : 0;
      argWrong += a ? 1 : 0;
      anyWrong += s || a ? 1 : 0;
    });
    const all = tables.corrupt.all;
    expect(all.n).toBe(tasks.length);
    expect(all.evt).toBe(1);
    expect(all.src).toBeCloseTo(1 - srcWrong / tasks.length, 12);
    expect(all.arg).toBeCloseTo(1 - argWrong / tasks.length, 12);
    expect(all.full).toBeCloseTo(1 - anyWrong / tasks.length, 12);
  });

  it('treats unparseable output as wrong everywhere and exits by kind', () => {
    const frameTask = tasks.find((t) => t.truth.frame && t.truth.frame.value === undefined) as NextStateTask;
    expect(scorePrediction({ error: 'garbage' }, frameTask.truth)).toEqual({
      full: false, evt: false, src: false, arg: false, locals: false, parsed: false,
    });
    expect(scorePrediction({ exit: 'normal' }, { exit: 'normal' }).full).toBe(true);
    expect(scorePrediction({ exit: 'error' }, { exit: 'normal' }).evt).toBe(false);
  });

  it('the naive baseline is scored and printed beside the model', async () => {
    const result = await evaluateNextState(tasks, [new OraclePredictor(), new NaiveBaseline()], { quiet: true });
    const base = result.tables.naive;
    expect(base.all.full).toBeGreaterThan(0);
    expect(base.all.full).toBeLessThan(1);
    const text = formatTables(result.tables);
    expect(text).toMatch(/step_into/);
    expect(text).toMatch(/naive/);
    // The interval of every row (bootstrapped over programs) and the row without continue.
    expect(text).toMatch(/\[\d+-\d+\]/);
    expect(text).toMatch(/all_but_continue/);
  });

  it('lists the actions in the vocabulary order, whatever order the tasks come in', async () => {
    const { tables } = await evaluateNextState([...tasks].reverse(), [new OraclePredictor()], { quiet: true });
    expect(Object.keys(tables.oracle)).toEqual([...ALL_ACTIONS, 'all', 'all_but_continue']);
  });
});

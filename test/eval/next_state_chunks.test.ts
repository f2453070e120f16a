import { chunksByAction, evaluateNextState } from '../../src/eval/next_state';
import { makeTasks, ALL_ACTIONS } from '../../src/eval/tasks';
import type { FramePredictor, NextStateTask, Prediction } from '../../src/eval/types';
import { fixtureTraces } from './helpers';

/** Answers every task with its truth, and records the chunks a batching eval hands it. */
class RecordingOracle implements FramePredictor {
  readonly name = 'oracle';
  readonly chunks: NextStateTask[][] = [];
  async predict(task: NextStateTask): Promise<Prediction> {
    return task.truth;
  }
  async predictMany(tasks: NextStateTask[]): Promise<Prediction[]> {
    this.chunks.push(tasks);
    return tasks.map((t) => t.truth);
  }
}

describe('next-state chunks (evaluateNextState)', () => {
  const { tasks } = makeTasks(fixtureTraces(), ALL_ACTIONS, { seed: 3, perProgram: 2 });

  it("hands a batching predictor each action's tasks together, and scores every task in the tasks' own order", async () => {
    const kinds = new Set(tasks.map((t) => t.action.kind));
    expect(kinds.size).toBeGreaterThan(4);
    expect(tasks.length).toBeLessThan(1024);
    // The fixture's tasks come program by program, so the actions are interleaved.
    expect(tasks.slice(0, 8).map((t) => t.action.kind).every((k) => k === tasks[0].action.kind)).toBe(false);
    const oracle = new RecordingOracle();
    const { scored, tables } = await evaluateNextState(tasks, [oracle], { quiet: true });
    // Fewer than 1,024 tasks: one chunk, one action after another.
    expect(oracle.chunks).toHaveLength(1);
    const order = oracle.chunks[0].map((t) => t.action.kind);
    expect(order.filter((k, i) => i === 0 || k !== order[i - 1])).toEqual([...kinds]);
    expect(scored.oracle.map((row) => row.task)).toEqual(tasks);
    expect(scored.oracle.every((row) => row.prediction === row.task.truth && row.scores.full)).toBe(true);
    expect(tables.oracle.all.full).toBe(1);
  });

  it('packs whole actions into chunks of at most 1,024 and splits a larger one, in order, each index once', () => {
    const kindOf = (i: number) => (i < 300 ? (i % 3 === 0 ? 'breakpoint' : 'continue') : i % 5 === 0 ? 'step_over' : 'step_into');
    const many = Array.from({ length: 2800 }, (_, i) => ({ action: { kind: kindOf(i) } }) as NextStateTask);
    const chunks = chunksByAction(many);
    // breakpoint 100 + continue 200 + step_over 500 fit one chunk; step_into's 2,000 are split.
    expect(chunks.map((c) => c.length)).toEqual([800, 1024, 976]);
    expect([...new Set(chunks[0].map((i) => many[i].action.kind))]).toEqual(['breakpoint', 'continue', 'step_over']);
    expect([...chunks[1], ...chunks[2]]).toEqual(many.flatMap((t, i) => (t.action.kind === 'step_into' ? [i] : [])));
    expect(chunks.flat().sort((a, b) => a - b)).toEqual(many.map((_, i) => i));
  });
});

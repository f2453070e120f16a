import { CompleterPredictor } from '../../src/eval/completer';
import { DEFAULT_HORIZON, runHorizon } from '../../src/eval/horizon';
import { evaluateNextState } from '../../src/eval/next_state';
import { OracleCompleter, trueContinuation } from '../../src/eval/oracle_completer';
import { ALL_ACTIONS, makeTasks } from '../../src/eval/tasks';
import { fixtureTraces } from './helpers';

describe('oracle completer', () => {
  const traces = fixtureTraces();
  const byId = new Map(traces.map((t) => [t.id, t]));

  it('writes the true next frame for every next-state task (text round trip through the parser)', async () => {
    const { tasks } = makeTasks(traces, ALL_ACTIONS, { seed: 3, perProgram: 2, maxPrefixFrames: 10 });
    const { tables } = await evaluateNextState(tasks, [new CompleterPredictor(new OracleCompleter(byId))], { quiet: true });
    expect(tables.oracle.all.n).toBe(tasks.length);
    expect(tables.oracle.all.full).toBe(1);
  });

  it('refuses prefixes that are not a walk of the real run', () => {
    expect(trueContinuation(traces[0], 'not ndl')).toBeUndefined();
  });

  it('scores 100% at every horizon when the intermediate steps are the truth', async () => {
    const { tasks, rows } = await runHorizon(traces, new OracleCompleter(byId), { ...DEFAULT_HORIZON, samples: 1, minSkipped: 2, quiet: true });
    expect(tasks).toBeGreaterThanOrEqual(2);
    expect(rows.map((r) => r.fraction)).toEqual(DEFAULT_HORIZON.fractions);
    for (const r of rows) expect(r.full).toBe(1);
  });
});

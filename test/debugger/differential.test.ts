import { buildForwardTree } from '../../src/debugger';
import { commandsFor, compareRun, DEFAULT_SCRIPT_OPTIONS, randomScript, runDifferential } from '../../src/debugger/differential';
import { runPdbHarness } from '../../src/debugger/pdb';
import type { Action } from '../../src/debugger/types';
import { Rng } from '../../src/util/rng';
import { fixtureTrace, fixtureTraces } from './helpers';

const GENERATOR_PROGRAMS = new Set(['generators', 'yield_from', 'join_generator_one_line']);

describe('pdb differential over the fixture programs', () => {
  test('20 seeded scripts per program agree with real pdb at every step (generators: documented class)', async () => {
    const traces = [...fixtureTraces().values()];
    const report = await runDifferential(traces, { ...DEFAULT_SCRIPT_OPTIONS, seed: 1, count: false, workers: 2, timeout: 30 });
    const unexpected = report.mismatches.filter((m) => m.verdict !== 'generator' || !GENERATOR_PROGRAMS.has(m.id));
    expect(unexpected).toEqual([]);
    expect(report.byVerdict.other).toBe(0);
    expect(report.pythonMismatches).toEqual([]);
    expect(report.programsAgreedOrDocumented).toBe(traces.length);
    expect(report.scripts).toBe(traces.length * 20);
    expect(report.steps).toBeGreaterThan(2000);
    // The scripts exercise every action, breakpoints that hit and that never hit, and all exits.
    for (const k of ['step_into', 'step_over', 'step_return', 'continue', 'breakpoint', 'breakpoint_unreached']) {
      expect(report.actions[k]).toBeGreaterThan(10);
    }
    expect(Object.keys(report.exits).sort()).toEqual(['error', 'never', 'normal']);
  });

  test('counting mode: same agreement, plus every stop is the same trace event and locals agree in order', async () => {
    const ids = ['closures', 'del_and_rebind', 'exception_frames', 'methods_init', 'never_loop', 'try_finally', 'generators'];
    const traces = ids.map(fixtureTrace);
    const report = await runDifferential(traces, { ...DEFAULT_SCRIPT_OPTIONS, seed: 2, count: true, workers: 2, timeout: 30 });
    expect(report.mismatches.filter((m) => m.verdict !== 'generator' || m.id !== 'generators')).toEqual([]);
  });

  test('a wrong oracle is caught: the harness does not agree with anything', async () => {
    const trace = fixtureTrace('exception_frames');
    const tree = buildForwardTree(trace);
    const actions: Action[] = Array.from({ length: 12 }, () => ({ kind: 'step_into' }));
    const [result] = await runPdbHarness([
      { id: trace.id, code: trace.code, entry_call: trace.entry_call, limit: null, count: true, timeout: 30, scripts: [commandsFor(tree, actions)] },
    ]);
    expect(compareRun(trace.id, 0, tree, actions, result.runs[0]).mismatch).toBeUndefined();
    // Tamper with one node's locals, depth, and line in turn: each is a disagreement at that step.
    const tampered = [
      (n: (typeof tree.nodes)[0]) => (n.locals = { ...n.locals, extra: '1' }),
      (n: (typeof tree.nodes)[0]) => (n.depth += 1),
      (n: (typeof tree.nodes)[0]) => (n.line += 1),
    ];
    for (const tamper of tampered) {
      const bad = buildForwardTree(trace);
      tamper(bad.nodes[7]);
      const c = compareRun(trace.id, 0, bad, actions, result.runs[0]);
      expect(c.mismatch?.step).toBe(7);
      expect(c.mismatch?.verdict).toBe('other');
    }
    // A step_over that the oracle got wrong (pretending it were step_into) is caught too.
    const over: Action[] = [{ kind: 'step_into' }, { kind: 'step_over' }];
    const [r2] = await runPdbHarness([
      { id: trace.id, code: trace.code, entry_call: trace.entry_call, limit: null, count: false, timeout: 30, scripts: [['step', 'step']] },
    ]);
    expect(compareRun(trace.id, 0, tree, over, r2.runs[0]).mismatch?.step).toBe(2);
  });

  test('scripts are deterministic per seed and hold 0 to 2 breakpoints', () => {
    const tree = buildForwardTree(fixtureTrace('loop_condition_calls'));
    const a = randomScript(tree, Rng.from(5, 'x'), DEFAULT_SCRIPT_OPTIONS);
    const b = randomScript(tree, Rng.from(5, 'x'), DEFAULT_SCRIPT_OPTIONS);
    expect(a).toEqual(b);
    for (let s = 0; s < 50; s++) {
      const script = randomScript(tree, Rng.from(0, s), DEFAULT_SCRIPT_OPTIONS);
      expect(script.filter((x) => x.kind === 'breakpoint').length).toBeLessThanOrEqual(2);
      expect(script.length).toBeLessThanOrEqual(DEFAULT_SCRIPT_OPTIONS.maxActions);
    }
  });
});

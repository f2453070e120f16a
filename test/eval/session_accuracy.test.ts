import type { TextCompleter } from '../../src/eval/completer';
import { OracleCompleter } from '../../src/eval/oracle_completer';
import { countStops, formatSessionAccuracy, sessionAccuracy, sessionScript } from '../../src/eval/session_accuracy';
import { ProgramSource } from '../../src/eval/session_source';
import { Rng } from '../../src/util/rng';
import { fixtureTraces } from './helpers';

describe('multi-step accuracy in scripted sessions', () => {
  const traces = fixtureTraces();
  const byId = new Map(traces.map((t) => [t.id, t]));

  it('the oracle is right at every stop, both ways', async () => {
    const a = await sessionAccuracy(traces, new OracleCompleter(byId), { seed: 0, commands: 6 });
    expect(a.sessions).toBeGreaterThanOrEqual(traces.filter((t) => t.status === 'normal').length);
    expect(a.stops).toBeGreaterThan(a.sessions);
    expect(a.right).toBe(a.stops);
    expect(a.byDirection.forward.stops + a.byDirection.inverse.stops).toBe(a.stops);
    expect(formatSessionAccuracy(a)).toContain(`${a.right} of ${a.stops} stops right (100.0%)`);
  });

  it('a model that always says the program exited is right only where it has', async () => {
    const exits: TextCompleter = { name: 'exits', completeFrame: async () => '<|frame_sep|><|exit_normal|>' };
    const a = await sessionAccuracy(traces, exits, { seed: 0, commands: 6, directions: ['forward'] });
    // Each session ends at its first (wrong) predicted exit: one stop per session, not right
    // after `s` into the entry's call.
    expect(a.sessions).toBeGreaterThan(0);
    expect(a.stops).toBe(a.sessions);
    expect(a.right).toBe(0);
  });

  it('scripts are seeded, start by stepping into the entry, and break on program lines', () => {
    const source = new ProgramSource('def f(x):\n    y = x\n    return y\n\ndef main():\n    return f(1)\n');
    const s1 = sessionScript(Rng.from(3, 'p'), 'forward', source, 40);
    expect(sessionScript(Rng.from(3, 'p'), 'forward', source, 40)).toEqual(s1);
    expect(s1[0]).toBe('s');
    for (const c of s1.filter((x) => x.startsWith('b '))) expect(['b 2', 'b 3']).toContain(c);
    expect(new Set(sessionScript(Rng.from(3, 'p'), 'inverse', source, 40))).toEqual(new Set(['rs', 'rn', 'rc']));
  });

  it('counts marks, not other lines', () => {
    const lines = ['> line 2 in f: y = x    {} [=]', '  real: > line 2 in f', '> line 3 in f: return y   [≠ src, locals]', '--Exit-- the program finished (exit_normal)   [=]', "> x   [real: not the model's]"];
    expect(countStops(lines)).toEqual({ stops: 4, right: 2 });
  });
});

import * as fs from 'fs';
import * as path from 'path';
import type { TextCompleter } from '../../src/eval/completer';
import { candidateFor, CruxTask, cruxTasks } from '../../src/eval/cruxeval';
import { runCruxEval } from '../../src/eval/cruxeval_run';
import { passAtK } from '../../src/eval/passk';
import { readPrediction } from '../../src/eval/completer';
import { traceInProcess } from '../../src/trace/inprocess';
import type { ProgramRecord } from '../../src/trace/types';
import { tempDir } from '../helpers/tmp';

const programs: ProgramRecord[] = [
  { id: 'c1', code: 'def f(xs):\n    out = []\n    for x in xs:\n        out.append(x * 2)\n    return out', input: '[1, 2, 3]', output: '[2, 4, 6]' },
  { id: 'c2', code: 'def f(s, n):\n    t = s * n\n    return t.upper()', input: "'ab', 2", output: "'ABAB'" },
  { id: 'c3', code: 'def f(*args, sep="-"):\n    parts = [str(a) for a in args]\n    return sep.join(parts)', input: '1, 2, sep="+"', output: "'1+2'" },
  { id: 'c4', code: 'def f(d):\n    keys = sorted(d)\n    if not keys:\n        return None\n    return keys[0]', input: "{'b': 1, 'a': 2}", output: "'a'" },
];

/** Writes the real document's next frame: a perfect neural debugger. */
class TruthCompleter implements TextCompleter {
  readonly name = 'truth';
  constructor(private readonly byPrefix: Map<string, string>) {}
  async completeFrame(prefix: string): Promise<string> {
    return this.byPrefix.get(prefix) ?? '';
  }
}

function allTasks(): CruxTask[] {
  const traces = traceInProcess(programs);
  return programs.flatMap((p, i) => cruxTasks(p, traces[i]));
}

describe('CruxEval tasks', () => {
  it('builds the three tasks per program with prefixes ending in the action', () => {
    const tasks = allTasks();
    expect(tasks.map((t) => t.kind).sort()).toEqual(
      [...Array(4)].flatMap(() => ['input_inv_step_call', 'output_breakpoint', 'output_step_return']).sort(),
    );
    for (const t of tasks) {
      if (t.kind === 'output_step_return') expect(t.prefix.endsWith('<|step_return|>')).toBe(true);
      if (t.kind === 'output_breakpoint') expect(t.prefix).toMatch(/<\|breakpoint\|>\s+return /);
      if (t.kind === 'input_inv_step_call') expect(t.prefix.endsWith('<|inv_step_call|>')).toBe(true);
    }
  });

  it('a wrong prediction yields a failing or missing check', () => {
    const t = allTasks().find((x) => x.kind === 'output_step_return') as CruxTask;
    const right = readPrediction(t.prefix, t.truth);
    expect(candidateFor(t, right.frame).check).toContain('assert f([1, 2, 3]) == ([2, 4, 6])');
    const wrong = readPrediction(t.prefix, t.truth.replace('[2, 4, 6]', '[2, 4, 7]'));
    expect(candidateFor(t, wrong.frame).answer).toBe('[2, 4, 7]');
    expect(candidateFor(t, undefined).error).toMatch(/no frame/);
  });

  it('scores the true continuations 100% in the sandbox, and corrupted ones 0%', async () => {
    const tasks = allTasks();
    const dir = tempDir('crux');
    const truth = new TruthCompleter(new Map(tasks.map((t) => [t.prefix, t.truth])));
    const summary = await runCruxEval(programs, truth, {
      samples: 2, ks: [1, 2], temperature: 0.8, topP: 0.95, seed: 1, resultsFile: path.join(dir, 'r.jsonl'), quiet: true,
    });
    for (const row of Object.values(summary.byTask)) {
      expect(row.tasks).toBe(4);
      expect(row.greedyPass1).toBe(1);
      expect(row.passAtK['pass@2']).toBe(1);
    }
    const lines = fs.readFileSync(path.join(dir, 'r.jsonl'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(12 * 3);

    // Corrupt every value the model writes: nothing may pass.
    const corrupt = new TruthCompleter(new Map(tasks.map((t) => [t.prefix, t.truth.replace(/\d/g, '9').replace(/'[a-zA-Z]+'/g, "'zz'")])));
    const bad = await runCruxEval(programs, corrupt, { samples: 0, ks: [], temperature: 0, topP: 1, seed: 1, quiet: true });
    for (const row of Object.values(bad.byTask)) expect(row.greedyPass1).toBe(0);
  });
});

describe('pass@k', () => {
  it('matches the closed form and its edge cases', () => {
    expect(passAtK(10, 0, 1)).toBe(0);
    expect(passAtK(10, 10, 5)).toBe(1);
    expect(passAtK(10, 3, 1)).toBeCloseTo(0.3, 12);
    // 1 - C(7,2)/C(10,2) = 1 - 21/45
    expect(passAtK(10, 3, 2)).toBeCloseTo(1 - 21 / 45, 12);
    expect(() => passAtK(2, 1, 3)).toThrow(/exceeds/);
  });
});

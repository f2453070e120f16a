import { FilterConfigSchema } from '../../src/programs/config';
import { filterRecords, HEAP_PERTURBATION } from '../../src/programs/filters';
import { codeFacts } from '../../src/programs/normalize';
import { SandboxPool } from '../../src/trace/pool';
import { rawTracer, sandboxTracer } from '../../src/trace/tracers';
import type { ProgramRecord } from '../../src/trace/types';

const cfg = FilterConfigSchema.parse({ maxEvents: 500 });
const tracer = rawTracer().trace;

async function run(records: ProgramRecord[], planned?: (i: number) => string[]) {
  const facts = await codeFacts(records.map((r) => r.code));
  return filterRecords(records, facts, tracer, cfg, planned);
}

const rec = (id: string, code: string, input: string): ProgramRecord => ({ id, code, input });

describe('filterRecords (raw tracer)', () => {
  test('keeps good programs and rejects each bad kind with its reason', async () => {
    const records = [
      rec('good', 'def f(nums):\n    total = 0\n    for n in nums:\n        total += n\n    return total\n', '[1, 2, 3]'),
      rec('loop', 'def f(n):\n    while True:\n        n += 1\n    return n\n', '0'),
      rec('id', 'def f(x):\n    return id(x) % 7\n', '5'),
      rec('setorder', 'class Item:\n    def __init__(self, name):\n        self.name = name\n\ndef f(n):\n    items = {Item(str(i)) for i in range(n)}\n    return [it.name for it in items]\n', '12'),
      rec('import', 'import os\n\ndef f(x):\n    return os.getcwd()\n', '1'),
      rec('allowed', 'import math\n\ndef f(x):\n    return math.floor(x / 2)\n', '7'),
      rec('syntax', 'def f(x)\n    return x\n', '1'),
      rec('short', 'def f(): 0', ''),
      rec('long', `def f(x):\n    return x + ${'1 + '.repeat(1300)}1\n`, '1'),
      rec('lines', `def f(x):\n${'    x += 1\n'.repeat(200)}    return x\n`, '1'),
    ];
    const out = await run(records);
    const reasons = Object.fromEntries(out.map((o) => [o.id, o.ok ? 'ok' : o.reason]));
    expect(reasons).toEqual({
      good: 'ok',
      loop: 'step_budget',
      id: 'nondeterministic_builtin',
      setorder: 'nondeterministic',
      import: 'forbidden_import',
      allowed: 'ok',
      syntax: 'syntax_error',
      short: 'too_short',
      long: 'too_long',
      lines: 'too_many_lines',
    });
    expect(out[0].stats).toMatchObject({ status: 'normal', maxDepth: 1, recursion: false, exception: false, output: '6' });
  });

  test('uncaught exceptions pass only when planned; stats see depth, recursion and exceptions', async () => {
    const code =
      'def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n\n' +
      'def check(x):\n    if x < 0:\n        raise ValueError(\'negative value\')\n    return fact(x)\n\n' +
      'def f(x):\n    try:\n        int(\'zz\')\n    except ValueError:\n        pass\n    return check(x)\n';
    const records = [rec('pos', code, '4'), rec('neg', code, '-1'), rec('typo', code, "'a'")];
    const out = await run(records, () => ['ValueError: negative value']);
    expect(out.map((o) => o.reason ?? 'ok')).toEqual(['ok', 'ok', 'unplanned_error:TypeError']);
    expect(out[0].stats).toMatchObject({ status: 'normal', maxDepth: 6, recursion: true, exception: true, output: '24' });
    expect(out[1].stats).toMatchObject({ status: 'error', error: 'ValueError: negative value' });
    expect(out[1].stats!.output).toBeUndefined();
    // Without a plan (a loaded corpus), an error run is data, not a rejection.
    const loaded = await run([records[2]]);
    expect(loaded[0].ok).toBe(true);
  });
});

describe('the determinism check in the sandbox', () => {
  test('the perturbed second run of a plain program stays in the shared child (no fork per candidate)', async () => {
    const pool = new SandboxPool(1);
    try {
      const code = 'def f(nums):\n    return sorted(nums)[::-1]\n' + HEAP_PERTURBATION;
      const r = await pool.trace('p', code, 'f([3, 1, 2])');
      expect(r.status).toBe('normal');
      expect(await pool.stats()).toMatchObject({ shared: 1, forked: 0 });
    } finally {
      await pool.close();
    }
  });

  test('still rejects a program whose trace depends on object addresses', async () => {
    const tracer = sandboxTracer(1);
    try {
      const code = 'class Item:\n    def __init__(self, name):\n        self.name = name\n\ndef f(n):\n    items = {Item(str(i)) for i in range(n)}\n    return [it.name for it in items]\n';
      const records = [rec('setorder', code, '12'), rec('good', 'def f(n):\n    return [i * 2 for i in range(n)]\n', '5')];
      const out = await filterRecords(records, await codeFacts(records.map((r) => r.code)), tracer.trace, cfg);
      expect(out.map((o) => o.reason ?? 'ok')).toEqual(['nondeterministic', 'ok']);
    } finally {
      await tracer.close();
    }
  });
});

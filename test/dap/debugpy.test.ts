import * as fs from 'fs';
import * as path from 'path';
import { peerPython } from '../helpers/peer-python';
import { debugpyAdapter, DebugpyDriver, NdbgDriver, type ProgramCase, tempDir } from '../../bench/dap/clients';
import { requestScript, runScript, summarize, type StopComparison } from '../../bench/dap/side_by_side';
import { Harness } from './helpers';

/**
 * The side-by-side check in CI (the full run is bench/dap/run.ts): debugpy and `ndbg dap` in
 * oracle mode, driven by the same DebugClient with the same seeded request scripts, must stop at
 * the same file, line, function and depth with the same locals at every stop.
 */
const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'debugger', 'programs.jsonl');
const PICK = ['count', 'recursion', 'exception_frames', 'uncaught', 'two_calls_one_line', 'methods_init', 'sorted_key_lambda', 'generators', 'exception_in_comprehension', 'uncaught_in_entry'];

function cases(): ProgramCase[] {
  return fs
    .readFileSync(FIXTURES, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { id: string; code: string; input: string })
    .filter((r) => PICK.includes(r.id))
    .map((r) => ({ id: r.id, code: r.code, call: `f(${r.input})` }));
}

describe('ndbg dap beside debugpy', () => {
  const h = new Harness();
  beforeAll(() => h.start());
  afterAll(() => h.stop());

  test('oracle mode agrees with debugpy at every stop of seeded stepIn/next/stepOut/continue/breakpoint scripts', async () => {
    const peer = peerPython(['debugpy']);
    const dbg = 'python' in peer ? debugpyAdapter(peer.python) : peer;
    if ('skip' in dbg || 'skip' in peer) {
      process.stderr.write(`skipped: ${'skip' in peer ? peer.skip : (dbg as { skip: string }).skip}\n`);
      return;
    }
    const all: StopComparison[] = [];
    for (const c of cases()) {
      const dir = tempDir('ndbg-dap-cmp-');
      for (const k of [0, 1]) {
        const ref = await DebugpyDriver.create(peer.python, dbg.adapter, dir, c);
        const cand = await NdbgDriver.create(h.port, dir, c);
        try {
          all.push(...(await runScript(c, k, requestScript(c, 1, k, 20), ref, cand)));
        } finally {
          await ref.close();
          await cand.close();
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
    }
    const s = summarize(all);
    expect(s.programs).toBe(PICK.length);
    // Every kind of request was exercised, and not only the launch stop.
    for (const k of ['launch', 'stepIn', 'next', 'stepOut', 'continue', 'breakpoint']) expect(s.byKind[k]?.stops ?? 0).toBeGreaterThan(0);
    expect(s.stops).toBeGreaterThan(4 * PICK.length);
    expect(all.filter((r) => !r.agree).map((r) => `${r.program} #${r.index} ${r.kind}: ${r.differs.join(',')} ${JSON.stringify(r.reference)} vs ${JSON.stringify(r.candidate)}`)).toEqual([]);
  }, 600000);
});

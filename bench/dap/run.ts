/**
 * `node bench/build/dap/bench/dap/run.js [--programs N] [--scripts K] [--length L] [--seed S]
 * [--checkpoint DIR [--model-only]] [--cruxeval FILE (default: the shipped evalsets/cruxeval.jsonl)] [--only ID] [--out FILE]` (after `npx tsc -p bench/dap`): the
 * side-by-side check of `ndbg dap` against debugpy over the debugger's function-level test
 * programs (test/fixtures/debugger/programs.jsonl) and CruxEval programs, in oracle mode, and
 * with --checkpoint also in model mode on the same scripts. Writes bench/results/dap.json.
 */
import * as fs from 'fs';
import * as path from 'path';
import { serveTcp } from '../../src/dap';
import { traceProgram } from '../../src/trace';
import { packageRoot } from '../../src/util/paths';
import { benchEnvironment } from '../results';
import { debugpyAdapter, DebugpyDriver, NdbgDriver, ProgramCase, tempDir } from './clients';
import { requestScript, runScript, StopComparison, summarize } from './side_by_side';

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

function readCases(file: string, prefix: string): ProgramCase[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { id: string; code: string; input: string; entry?: string })
    .map((r) => ({ id: `${prefix}${r.id}`, code: r.code, call: `${r.entry ?? 'f'}(${r.input})` }));
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const root = packageRoot();
  const nCrux = Number(flag(args, 'programs') ?? 40);
  const scripts = Number(flag(args, 'scripts') ?? 3);
  const length = Number(flag(args, 'length') ?? 25);
  const seed = Number(flag(args, 'seed') ?? 0);
  const checkpoint = flag(args, 'checkpoint');
  const crux = flag(args, 'cruxeval') ?? path.join(root, 'evalsets', 'cruxeval.jsonl');
  const outFile = flag(args, 'out') ?? path.join(root, 'bench', 'results', 'dap.json');
  const only = flag(args, 'only');
  const python = process.env.NDBG_PEER_PYTHON ?? path.join(root, '.venv', 'bin', 'python');
  const dbg = debugpyAdapter(python);
  if ('skip' in dbg) throw new Error(dbg.skip);

  let cases = readCases(path.join(root, 'test', 'fixtures', 'debugger', 'programs.jsonl'), 'fixture:');
  if (fs.existsSync(crux) && nCrux > 0) cases.push(...readCases(crux, 'cruxeval:').slice(0, nCrux));
  if (only) cases = cases.filter((c) => c.id.includes(only));
  // A run the tracer cut off (status never) cannot be compared with a debugger that runs it to the end.
  const excluded: Array<{ id: string; why: string }> = [];
  const kept: ProgramCase[] = [];
  for (const c of cases) {
    const t = await traceProgram({ id: c.id, code: c.code, call: c.call });
    if (t.status === 'never') excluded.push({ id: c.id, why: `the traced run never finished (${t.error ?? 'limit'}); debugpy would run it past the trace` });
    else kept.push(c);
  }
  const { server, port } = await serveTcp(0);
  const modes: Array<{ name: string; extra: Record<string, unknown> }> = args.includes('--model-only') ? [] : [{ name: 'oracle', extra: {} }];
  if (checkpoint) modes.push({ name: 'model', extra: { checkpoint: path.resolve(checkpoint) } });
  const result: Record<string, unknown> = { environment: benchEnvironment(), seed, scriptsPerProgram: scripts, scriptLength: length, excluded };
  for (const mode of modes) {
    const all: StopComparison[] = [];
    const t0 = Date.now();
    for (const c of kept) {
      for (let k = 0; k < scripts; k++) {
        const dir = tempDir('ndbg-dap-');
        const steps = requestScript(c, seed, k, length);
        const ref = await DebugpyDriver.create(python, dbg.adapter, dir, c);
        const cand = await NdbgDriver.create(port, dir, c, mode.extra);
        try {
          all.push(...(await runScript(c, k, steps, ref, cand)));
        } catch (e) {
          process.stderr.write(`${c.id} script ${k}: ${(e as Error).message}\n`);
          all.push({ program: c.id, script: k, index: -1, kind: 'launch', agree: false, differs: [`error: ${(e as Error).message}`], reference: { kind: 'exit' }, candidate: { kind: 'exit' } });
        } finally {
          await ref.close();
          await cand.close();
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
      process.stderr.write(`${mode.name} ${c.id}: ${all.filter((r) => r.program === c.id && r.agree).length}/${all.filter((r) => r.program === c.id).length}\n`);
    }
    result[mode.name] = { ...summarize(all), seconds: (Date.now() - t0) / 1000, differences: all.filter((r) => !r.agree) };
  }
  server.close();
  fs.mkdirSync(path.dirname(outFile), { recursive: true });
  fs.writeFileSync(outFile, JSON.stringify(result, null, 2) + '\n');
  const brief = (m: string) => {
    const s = result[m] as ReturnType<typeof summarize> | undefined;
    return s ? `${m}: ${s.agree}/${s.stops} stops agree (${(100 * s.rate).toFixed(2)}%) over ${s.programs} programs; ${Object.entries(s.byKind).map(([k, v]) => `${k} ${v.agree}/${v.stops}`).join(', ')}` : '';
  };
  process.stdout.write(`${brief('oracle')}\n${brief('model')}\nwritten to ${outFile}\n`);
  process.exit(0);
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});

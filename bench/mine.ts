import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { installPinned, pinnedPackages } from '../src/programs/mine_packages';
import { packageRoot } from '../src/util/paths';
import { isaFromCpuinfo, readCpuinfo } from './cpu_isa';
import { BenchUsageError, flagValue, intFlag } from './flags';

/**
 * `npm run bench -- mine [--packages=bench/mine-packages.txt] [--dir=.tmp/mine-packages]
 * [--workers=2] [--python=python3]`: `ndbg programs mine` with its defaults on the standard
 * library plus a pinned list of pure-Python distributions, installed the first time with
 * `pip install --no-deps --target DIR` from the configured index. Reports what was kept, the
 * time, the acceptance rate of every filter, and issue 34's target: ≥ 5,000 distinct functions
 * with ≥ 2 distinct traced inputs each in ≤ 15 minutes.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const root = packageRoot();
  const list = path.resolve(root, flagValue(args, 'packages') ?? 'bench/mine-packages.txt');
  const dir = path.resolve(root, flagValue(args, 'dir') ?? '.tmp/mine-packages');
  const workers = intFlag(args, 'workers', 2);
  const python = flagValue(args, 'python') ?? 'python3';
  if (!fs.existsSync(list)) throw new BenchUsageError(`--packages=${list}: no such file`);
  const pins = pinnedPackages(list);
  const venvPython = path.join(root, '.venv', 'bin', 'python');
  installPinned(pins, dir, fs.existsSync(venvPython) ? venvPython : 'python3', `--packages=${list}`);

  const out = path.join(dir, '..', 'mine-bench.jsonl');
  const cli = path.join(root, 'bin', 'ndbg.js');
  const mineArgs = ['programs', 'mine', '--stdlib', '--packages-dir', dir, '--against', path.join(root, 'evalsets', 'cruxeval.jsonl'), '--workers', String(workers), '--python', python, '--out', out, '--quiet'];
  const start = Date.now();
  const r = spawnSync(process.execPath, [cli, ...mineArgs], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 26 });
  const wallS = (Date.now() - start) / 1000;
  if (r.status !== 0) throw new Error(`ndbg programs mine failed (exit ${r.status})`);
  const m = JSON.parse(fs.readFileSync(`${out}.manifest.json`, 'utf8'));
  const extracted = m.functionsExtracted as number;
  const rate = (counts: Record<string, number>, of: number) => Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, { count: v, share: v / of }]));
  return {
    command: `ndbg ${mineArgs.join(' ').replace(dir, 'DIR').replace(out, 'OUT').replace(root + '/', '')}`,
    packagesList: path.relative(root, list),
    packages: m.packages,
    isa: isaFromCpuinfo(readCpuinfo()).label,
    python: m.python,
    tracer: m.tracer,
    seed: m.seed,
    wallS,
    extractionS: m.extractionSeconds,
    extractionPeakMiB: m.extractionPeakMiB,
    functionsKept: m.functionsKept,
    recordsKept: m.recordsKept,
    functionsPerMinute: m.functionsKept / (wallS / 60),
    target: { functions: 5000, minutes: 15, met: m.functionsKept >= 5000 && wallS <= 15 * 60 },
    modules: m.modules,
    functionsSeen: m.functionsSeen,
    // Of the module-level functions seen: why each was or was not extracted.
    extraction: rate(m.extraction, m.functionsSeen),
    functionsExtracted: extracted,
    callsTried: m.callsTried,
    callsRedrawn: m.callsRedrawn,
    keptFromRedraws: m.keptFromRedraws,
    // Of the calls tried: why each was not kept.
    callRejections: rate(m.callRejections, m.callsTried),
    // Of the functions extracted: why each was dropped.
    functionRejections: rate(m.functionRejections, extracted),
    perPackage: m.perPackage,
    callsPerPackage: m.callsPerPackage,
  };
}

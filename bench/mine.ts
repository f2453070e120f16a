import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
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
  installPackages(pins, list, dir, root);

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

/** `name==version` lines (comments and blank lines skipped): a pinned list, nothing else. */
export function pinnedPackages(file: string): string[] {
  const pins: string[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      const line = raw.replace(/#.*/, '').trim();
      if (!line) return;
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+$/.test(line)) throw new BenchUsageError(`${file}:${i + 1}: expected name==version, got "${line}"`);
      pins.push(line);
    });
  if (pins.length === 0) throw new BenchUsageError(`${file}: no packages listed`);
  return pins;
}

/** Installs the list once into `dir`; a stamp of the list's text says it is there. */
function installPackages(pins: string[], list: string, dir: string, root: string): void {
  const stamp = path.join(dir, '.ndbg-installed');
  const want = pins.join('\n');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const venvPython = path.join(root, '.venv', 'bin', 'python');
  const pip = fs.existsSync(venvPython) ? venvPython : 'python3';
  const r = spawnSync(pip, ['-m', 'pip', 'install', '--quiet', '--no-deps', '--retries', '0', '--target', dir, '-r', list], { encoding: 'utf8', stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`pip install of ${list} into ${dir} failed (exit ${r.status})`);
  fs.writeFileSync(stamp, want);
}

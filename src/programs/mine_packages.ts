import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { cacheRoot } from '../util/cache_dir';
import { UserError } from '../util/errors';

/**
 * Pinned lists of pure-Python distributions to mine (`bench/mine-packages.txt`,
 * `configs/mine-packages-quickstart.txt`), installed with `pip install --no-deps --target`:
 * mined functions import only the standard library's allow-list (mine.ts), so no dependency
 * is ever run, and a pin per line makes every machine mine the same code.
 */

/** `name==version` lines (comments and blank lines skipped): a pinned list, nothing else. */
export function pinnedPackages(file: string): string[] {
  if (!fs.existsSync(file)) throw new UserError(`${file}: no such package list`);
  const pins: string[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      const line = raw.replace(/#.*/, '').trim();
      if (!line) return;
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*==[A-Za-z0-9.+!_-]+$/.test(line)) throw new UserError(`${file}:${i + 1}: expected name==version, got "${line}"`);
      pins.push(line);
    });
  if (pins.length === 0) throw new UserError(`${file}: no packages listed`);
  return pins;
}

/** The stamp that says a directory holds exactly these pins, installed. */
const STAMP = '.ndbg-installed';

/**
 * Installs `pins` into `dir` unless its stamp says they are there; a changed list replaces the
 * directory. pip comes from `python` (its index configuration, the user's).
 */
export function installPinned(pins: string[], dir: string, python: string, what: string): { installed: boolean; seconds: number } {
  const stamp = path.join(dir, STAMP);
  const want = pins.join('\n');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === want) return { installed: false, seconds: 0 };
  const start = Date.now();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const list = path.join(dir, '.requirements.txt');
  fs.writeFileSync(list, want + '\n');
  const r = spawnSync(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--only-binary=:all:', '--retries', '1', '--target', dir, '-r', list], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) {
    const tail = `${r.stderr ?? ''}${r.error ? r.error.message : ''}`.trim().split('\n').filter((l) => !l.startsWith('WARNING')).slice(-3).join('; ');
    throw new UserError(`${what}: ${python} -m pip install --no-deps --target ${dir} failed (exit ${r.status}): ${tail || 'no message'}`);
  }
  fs.writeFileSync(stamp, want);
  return { installed: true, seconds: (Date.now() - start) / 1000 };
}

/** The cache directory for a pinned list and Python: one per (pins, Python version). */
export function pinnedPackagesDir(pins: string[], pythonVersion: string): string {
  const key = createHash('sha256').update(`${pythonVersion}\n${pins.join('\n')}`).digest('hex').slice(0, 12);
  return path.join(cacheRoot(), 'mine-packages', key);
}

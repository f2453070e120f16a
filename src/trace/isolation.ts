import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { UserError } from '../util/errors';
import { assetPath } from '../util/paths';

/**
 * How sandbox workers are isolated from the machine.
 *
 * - `bwrap`: the worker runs inside bubblewrap: read-only root filesystem, a private tmpfs /tmp
 *   holding the working directories, new user/pid/net/ipc/uts namespaces (no network), killed
 *   with its parent. Plus the Python guards and rlimits below.
 * - `guards`: no OS isolation is available; rlimits plus the Python audit-hook guards
 *   (src/trace/guards.py) that refuse process creation, signals to other processes, network and
 *   any filesystem write outside the program's working directory.
 *
 * `auto` (default) uses bwrap when a probe run of it works (it needs user namespaces, which
 * some containers lack) and falls back to guards otherwise. NDBG_SANDBOX=bwrap|guards|auto
 * in the environment overrides the default.
 */
export type IsolationMode = 'bwrap' | 'guards';
export type IsolationChoice = IsolationMode | 'auto';

/** Inside bwrap: where the tracer's Python files are mounted and the working directories live. */
const BWRAP_SRC = '/tmp/.ndbg-src';
const BWRAP_BASE = '/tmp/ndbg';

let probed: { ok: boolean; reason: string } | undefined;

/** Runs bwrap once with the real worker flags; cached for the process. */
export function probeBwrap(python = 'python3'): { ok: boolean; reason: string } {
  if (probed) return probed;
  const args = [...bwrapArgs(), '--', python, '-S', '-c', 'print("ndbg-ok")'];
  const res = spawnSync('bwrap', args, { encoding: 'utf8', timeout: 10000, env: baseEnv('/tmp') });
  if (res.error) probed = { ok: false, reason: `bwrap not usable: ${(res.error as NodeJS.ErrnoException).code ?? res.error.message}` };
  else if (res.status !== 0 || !res.stdout.includes('ndbg-ok'))
    probed = { ok: false, reason: `bwrap probe failed: ${(res.stderr || `exit ${res.status}`).trim().split('\n')[0]}` };
  else probed = { ok: true, reason: 'bwrap probe ran' };
  return probed;
}

export function resolveIsolation(choice?: IsolationChoice, python = 'python3'): { mode: IsolationMode; reason: string } {
  const env = process.env.NDBG_SANDBOX;
  const wanted = choice ?? (env as IsolationChoice | undefined) ?? 'auto';
  if (!['auto', 'bwrap', 'guards'].includes(wanted)) {
    throw new UserError(`sandbox isolation must be auto, bwrap or guards, got "${wanted}"${choice ? '' : ' (from NDBG_SANDBOX)'}`);
  }
  if (wanted === 'guards') return { mode: 'guards', reason: 'requested' };
  const probe = probeBwrap(python);
  if (probe.ok) return { mode: 'bwrap', reason: probe.reason };
  if (wanted === 'bwrap') throw new UserError(`sandbox isolation bwrap requested but ${probe.reason}`);
  return { mode: 'guards', reason: probe.reason };
}

/** `readOnly`: host paths under /tmp to show inside too (read-only), e.g. a repository being
 * traced (src/trace/repo.ts); everything else is visible already through the root bind. */
function bwrapArgs(readOnly: string[] = []): string[] {
  const src = path.dirname(assetPath('src/trace/sandbox.py'));
  return [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    ...readOnly.flatMap((p) => ['--ro-bind', p, p]),
    '--ro-bind', src, BWRAP_SRC,
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    '--chdir', '/tmp',
  ];
}

/** A clean environment: nothing of the caller's (secrets, PYTHON* settings) leaks in. */
function baseEnv(tmp: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    LANG: 'C.UTF-8',
    PYTHONHASHSEED: '0',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONIOENCODING: 'utf-8',
    HOME: tmp,
    TMPDIR: tmp,
  };
}

export interface WorkerCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  /** Host directory to delete when the worker is gone (guards mode). */
  cleanup?: string;
}

/** The command line of one sandbox worker; `config` is passed to sandbox.py as JSON. */
export function workerCommand(mode: IsolationMode, python: string, config: Record<string, unknown>, readOnly: string[] = []): WorkerCommand {
  // -S: no site (fewer modules in the forked worker, so a cheaper fork); -s, -B: no user site, no .pyc writes.
  const pyFlags = ['-S', '-s', '-B'];
  if (mode === 'bwrap') {
    const cfg = { ...config, isolation: 'bwrap', workdir_base: BWRAP_BASE };
    return {
      command: 'bwrap',
      args: [...bwrapArgs(readOnly.filter((p) => p === '/tmp' || p.startsWith('/tmp/'))), '--', python, ...pyFlags, `${BWRAP_SRC}/sandbox.py`, JSON.stringify(cfg)],
      env: baseEnv(`${BWRAP_BASE}/work`),
    };
  }
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-sandbox-'));
  const cfg = { ...config, isolation: 'guards', workdir_base: base };
  return {
    command: python,
    args: [...pyFlags, assetPath('src/trace/sandbox.py'), JSON.stringify(cfg)],
    env: baseEnv(path.join(base, 'work')),
    cleanup: base,
  };
}

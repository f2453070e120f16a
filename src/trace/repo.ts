/**
 * Repository-level traces (docs/trace.md, "Repository traces"): run a repository's own entry
 * points — unittest tests, doctests, pytest nodes, `module:expression` calls — in the sandbox
 * (the repository is only read; the run's working directory is the sandbox's scratch dir) and
 * record only the frames of files under the repository root. One record per entry point,
 * bounded like any trace (events, repr size, time; the bounds are in the record).
 */
import { createHash } from 'crypto';
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import type { SandboxPool } from './pool';
import type { RunLimit, RunStatus, TraceEvent } from './types';

/** What the sandbox needs to know about a repository (sent as JSON with each request). */
export interface RepoSpec {
  /** Absolute, symlink-free path of the repository: a directory or a single module file. */
  root: string;
  /** sys.path entries put first (absolute), e.g. the root itself or its `src/`. */
  path: string[];
  /** Discover unittest tests (files test*.py under root). */
  unittest: boolean;
  /** Modules whose doctests are entry points. */
  doctest: string[];
}

/** A def block of a file: [first decorator line, def line, last line, enclosing class lines]. */
export type FunctionBlock = [number, number, number, number[]];

/** A repository event: a trace event, with the file (relative to root) on call events. */
export interface RepoTraceEvent extends TraceEvent {
  file?: string;
}

/** One line of `ndbg trace-repo`'s output: one entry point run. */
export interface RepoTraceRecord {
  id: string;
  kind: 'repo';
  /** The repository's id in the corpus (its manifest entry). */
  repo_id: string;
  repo: string;
  entry: string;
  python: string;
  status: RunStatus;
  error?: string;
  limit?: RunLimit;
  /** How the entry's own check went, e.g. "passed 1 of 1" (normal runs only). */
  outcome?: string;
  events: RepoTraceEvent[];
  /** Source text of every file that had events, by path relative to the root. */
  files: Record<string, string>;
  /** The def blocks of those files (null: the file did not parse). */
  blocks: Record<string, FunctionBlock[] | null>;
  bounds: { max_events: number; repr_cap: number; timeout_s: number };
  /** The sys.path entries the run had first (for replaying it under pdb). */
  path: string[];
  stdout?: string;
  stderr?: string;
  isolation?: string;
  blocked?: string[];
}

export interface RepoOptions {
  /** sys.path entries relative to the root (default: the root itself; a file root: its directory). */
  path?: string[];
  unittest?: boolean;
  doctest?: string[];
}

/** Resolves and checks a repository path; a bad one is a UserError naming it. */
export function repoSpec(root: string, opts: RepoOptions = {}): RepoSpec {
  let real: string;
  try {
    real = fs.realpathSync(root);
  } catch {
    throw new UserError(`--repo ${root}: no such file or directory`);
  }
  const isFile = fs.statSync(real).isFile();
  if (isFile && !real.endsWith('.py')) throw new UserError(`--repo ${root}: a repository is a directory or one .py file`);
  const base = isFile ? path.dirname(real) : real;
  const rels = opts.path ?? ['.'];
  const dirs = rels.map((p) => {
    const full = path.resolve(base, p);
    if (!fs.existsSync(full) || !fs.statSync(full).isDirectory()) throw new UserError(`--path ${p}: no directory ${full}`);
    return full;
  });
  return { root: real, path: dirs, unittest: opts.unittest ?? !isFile, doctest: opts.doctest ?? [] };
}

/** What a sandbox pool tracing these repositories must be able to read (SandboxOptions.readOnlyPaths). */
export function repoReadPaths(specs: RepoSpec[]): string[] {
  return [...new Set(specs.flatMap((s) => [s.root, ...s.path]))];
}

/** The absolute path of a repository file (`rel` as in the records; a one-file repository's
 * only file is its root). */
export function repoFilePath(root: string, rel: string): string {
  return root.endsWith('.py') && path.basename(root) === rel ? root : path.join(root, rel);
}

function asRecord(r: Record<string, unknown>, repoId: string, spec: RepoSpec): RepoTraceRecord {
  const rec = r as unknown as RepoTraceRecord;
  rec.repo_id = repoId;
  rec.repo = spec.root;
  rec.path = spec.path;
  rec.files ??= {};
  rec.blocks ??= {};
  return rec;
}

/** The entry points the sandboxed discovery finds (unittest tests, doctests) and its errors. */
export async function discoverEntries(pool: SandboxPool, spec: RepoSpec, timeoutS = 30): Promise<{ entries: string[]; errors: string[] }> {
  const r = await pool.traceRepoEntry('discover', JSON.stringify(spec), 'discover', { timeoutS });
  if (r.status !== 'normal') throw new UserError(`--repo ${spec.root}: discovering entry points failed: ${String(r.error)}`);
  return { entries: (r.entries as string[]) ?? [], errors: (r.errors as string[]) ?? [] };
}

/** Traces each entry point in the sandbox; records in entry order. */
export async function* traceRepoEntries(
  pool: SandboxPool,
  spec: RepoSpec,
  repoId: string,
  entries: string[],
  limits: { timeoutS?: number; maxEvents?: number } = {},
): AsyncGenerator<RepoTraceRecord> {
  const json = JSON.stringify(spec);
  // All requests are queued at once: the pool keeps its workers busy and answers in order.
  const pending = entries.map((e) => pool.traceRepoEntry(`${repoId}:${e}`, json, e, limits));
  for (const p of pending) yield asRecord(await p, repoId, spec);
}

/** The manifest entry of one traced repository (docs/trace.md, "Corpus manifest"). */
export interface RepoManifestEntry {
  id: string;
  root: string;
  /** Distribution or package name. */
  package: string;
  /** Its version: the distribution's, the Python version for the standard library, or null. */
  version: string | null;
  /** `git rev-parse HEAD` when the root is in a git checkout. */
  commit: string | null;
  /** sha256 of every .py file under the root, by relative path. */
  files: Record<string, string>;
  entries: number;
  statuses: Record<string, number>;
}

/** sha256 of every .py file under root (or of root itself when it is a file), sorted by path. */
export function hashPythonFiles(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const hash = (p: string) => createHash('sha256').update(fs.readFileSync(p)).digest('hex');
  if (fs.statSync(root).isFile()) {
    out[path.basename(root)] = hash(root);
    return out;
  }
  const walk = (dir: string): void => {
    for (const name of fs.readdirSync(dir).sort()) {
      if (name === '__pycache__' || name.startsWith('.')) continue;
      const p = path.join(dir, name);
      const st = fs.lstatSync(p);
      if (st.isDirectory()) walk(p);
      else if (st.isFile() && name.endsWith('.py')) out[path.relative(root, p).split(path.sep).join('/')] = hash(p);
    }
  };
  walk(root);
  return out;
}

/** The git commit of the checkout holding `root`, or null. */
export function gitCommit(root: string): string | null {
  const dir = fs.statSync(root).isFile() ? path.dirname(root) : root;
  const r = spawnSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

export function manifestEntry(
  id: string,
  spec: RepoSpec,
  records: RepoTraceRecord[],
  meta: { package?: string; version?: string | null },
): RepoManifestEntry {
  const statuses: Record<string, number> = {};
  for (const r of records) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  return {
    id,
    root: spec.root,
    package: meta.package ?? path.basename(spec.root).replace(/\.py$/, ''),
    version: meta.version ?? null,
    commit: gitCommit(spec.root),
    files: hashPythonFiles(spec.root),
    entries: records.length,
    statuses,
  };
}

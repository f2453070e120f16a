import * as fs from 'fs';
import * as path from 'path';
import { execFileSync } from 'child_process';
import { UserError } from '../util/errors';

/**
 * Where `ndbg programs mine` finds code: the standard library of a Python, installed packages
 * (a site-packages or `pip install --target` directory; the files each distribution's RECORD
 * lists), or any directory. Each file carries its provenance; test files are read for call
 * sites only, never mined.
 */
export interface Provenance {
  package: string;
  version: string | null;
  license: string | null;
}

export interface CorpusFile {
  path: string;
  /** The path recorded in provenance: relative to the corpus root, so the same on every machine. */
  rel: string;
  /** Dotted module name, relative to the corpus root (`pkg.util`). */
  module: string;
  origin: Provenance;
  /** Under a test directory or named test_*.py: call sites only. */
  test: boolean;
}

/** Standard-library directories with no standalone functions worth tracing (GUI, tests, packaging). */
const STDLIB_SKIP = new Set(['idlelib', 'tkinter', 'turtledemo', 'lib2to3', 'ensurepip', 'site-packages', 'dist-packages', '__pycache__', 'venv', 'pydoc_data', 'distutils', 'msilib', 'config-3.11-x86_64-linux-gnu']);

function isTestPath(rel: string): boolean {
  const parts = rel.split(/[\\/]/);
  return parts.some((p, i) => (i < parts.length - 1 && /^(tests?|testing)$/.test(p)) || /^test_|_test\.py$|^tests?\.py$/.test(p));
}

function moduleName(rel: string): string {
  const m = rel.replace(/\.py$/, '').split(/[\\/]/).join('.');
  return m.endsWith('.__init__') ? m.slice(0, -'.__init__'.length) : m;
}

function walkPy(root: string, skipDir: (name: string, rel: string) => boolean): string[] {
  const out: string[] = [];
  const visit = (rel: string) => {
    const entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        if (!skipDir(e.name, r) && !fs.existsSync(path.join(root, r, 'pyvenv.cfg'))) visit(r);
      } else if (e.isFile() && e.name.endsWith('.py')) out.push(r);
    }
  };
  visit('');
  return out;
}

/** The provenance package name of standard-library functions. */
export const STDLIB_PACKAGE = 'python-stdlib';

export function pythonVersion(python: string): string {
  return execFileSync(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { encoding: 'utf8' }).trim();
}

/** The standard library of `python` (its `sysconfig` stdlib directory). */
export function stdlibFiles(python: string): CorpusFile[] {
  const root = execFileSync(python, ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])'], { encoding: 'utf8' }).trim();
  const origin: Provenance = { package: STDLIB_PACKAGE, version: pythonVersion(python), license: 'PSF-2.0' };
  const rels = walkPy(root, (name) => STDLIB_SKIP.has(name));
  return rels.map((rel) => ({ path: path.join(root, rel), rel, module: moduleName(rel), origin, test: isTestPath(rel) || rel.startsWith('unittest/') }));
}

/** METADATA's `Name`, `Version` and license (License-Expression, License, or a license classifier). */
export function readDistMetadata(text: string): { name: string | null; version: string | null; license: string | null } {
  const header = text.split(/\r?\n\r?\n/)[0];
  const field = (k: string) => header.match(new RegExp(`^${k}: *(.+)$`, 'mi'))?.[1].trim() ?? null;
  const classifier = header.match(/^Classifier: *License :: (?:OSI Approved :: )?(.+)$/im)?.[1].trim() ?? null;
  const license = field('License-Expression') ?? (field('License') && field('License')!.length <= 80 && field('License') !== 'UNKNOWN' ? field('License') : null) ?? classifier;
  return { name: field('Name'), version: field('Version'), license };
}

/**
 * The .py files of installed distributions in `dir` (site-packages or a `pip --target`
 * directory), from each `*.dist-info/RECORD`; `only` restricts to these distribution names.
 */
export function packageFiles(dir: string, only?: string[]): CorpusFile[] {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UserError(`--packages-dir ${dir}: not a directory`);
  const norm = (n: string) => n.toLowerCase().replace(/[-_.]+/g, '-');
  const wanted = only?.length ? new Set(only.map(norm)) : null;
  const found = new Set<string>();
  const out: CorpusFile[] = [];
  for (const info of fs.readdirSync(dir).filter((d) => d.endsWith('.dist-info')).sort()) {
    const metaFile = path.join(dir, info, 'METADATA');
    const recordFile = path.join(dir, info, 'RECORD');
    if (!fs.existsSync(metaFile) || !fs.existsSync(recordFile)) continue;
    const meta = readDistMetadata(fs.readFileSync(metaFile, 'utf8'));
    if (!meta.name || (wanted && !wanted.has(norm(meta.name)))) continue;
    found.add(norm(meta.name));
    const origin: Provenance = { package: meta.name, version: meta.version, license: meta.license };
    const rels = fs
      .readFileSync(recordFile, 'utf8')
      .split('\n')
      .map((l) => l.split(',')[0])
      .filter((r) => r.endsWith('.py') && !r.startsWith('..') && !r.includes('.dist-info/') && !r.includes('__pycache__'))
      .sort();
    for (const rel of rels) {
      if (fs.existsSync(path.join(dir, rel))) out.push({ path: path.join(dir, rel), rel, module: moduleName(rel), origin, test: isTestPath(rel) });
    }
  }
  if (wanted) {
    const missing = [...wanted].filter((w) => !found.has(w));
    if (missing.length) throw new UserError(`--packages-dir ${dir}: no installed distribution named ${missing.join(', ')}`);
  }
  return out;
}

/** Any directory of Python code (a repository): virtualenvs, .git and node_modules are skipped. */
export function directoryFiles(dir: string, origin: Provenance): CorpusFile[] {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new UserError(`--dir ${dir}: not a directory`);
  const skip = new Set(['.git', 'node_modules', '__pycache__', '.venv', 'venv', 'site-packages', 'build', 'dist', '.tox']);
  return walkPy(dir, (name) => skip.has(name) || name.startsWith('.')).map((rel) => ({ path: path.join(dir, rel), rel, module: moduleName(rel), origin, test: isTestPath(rel) }));
}

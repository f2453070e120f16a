/**
 * Where documents come from. A source is `NAME=PATH[:kind]`:
 * - ndl:  JSONL of `{id, direction, actions, text}` (written by `ndbg ndl`); the split key is `id`,
 *         or `repo` for repository-level documents (docs/data.md, "Repository-level documents").
 * - code: a directory of .py files (walked recursively, sorted by relative path; key = path) or a
 *         JSONL of `{text}` (key = `id` or `path` when present, else the line number).
 * - text: JSONL of `{text}` (web text; key as for code JSONL).
 * Documents are yielded in file order, which together with in-order packing makes builds
 * deterministic.
 */
import * as fs from 'fs';
import * as path from 'path';
import { listPythonFiles } from '../util/files';
import { UserError } from '../util/errors';
import { invalidLine, readJsonl } from '../util/jsonl';

export const SOURCE_KINDS = ['ndl', 'code', 'text'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

export interface SourceSpec {
  name: string;
  path: string;
  kind: SourceKind;
}

export interface SourceDocument {
  /** Stable identity used for the train/validation split (so the split survives reordering). */
  key: string;
  text: string;
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** Parses `NAME=PATH[:kind]`; without a kind a directory is `code` and a file is `text`. */
export function parseSourceSpec(spec: string): SourceSpec {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new UserError(`--source ${spec}: expected NAME=PATH[:kind], e.g. traces=out/ndl.jsonl:ndl`);
  const name = spec.slice(0, eq);
  if (!NAME_RE.test(name)) throw new UserError(`--source ${spec}: name "${name}" must be letters, digits, _ . - (used in file names)`);
  let p = spec.slice(eq + 1);
  let kind: SourceKind | undefined;
  const colon = p.lastIndexOf(':');
  if (colon > 0) {
    const k = p.slice(colon + 1);
    if ((SOURCE_KINDS as readonly string[]).includes(k)) {
      kind = k as SourceKind;
      p = p.slice(0, colon);
    } else if (!fs.existsSync(p)) {
      throw new UserError(`--source ${spec}: unknown kind "${k}" (expected one of ${SOURCE_KINDS.join(', ')})`);
    }
  }
  if (!p) throw new UserError(`--source ${spec}: empty path`);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(p);
  } catch {
    throw new UserError(`--source ${spec}: ${p} does not exist`);
  }
  kind ??= stat.isDirectory() ? 'code' : 'text';
  if (stat.isDirectory() && kind !== 'code') throw new UserError(`--source ${spec}: ${p} is a directory; only kind "code" reads directories`);
  return { name, path: p, kind };
}

export async function* readDocuments(spec: SourceSpec): AsyncGenerator<SourceDocument> {
  if (fs.statSync(spec.path).isDirectory()) {
    for (const rel of listPythonFiles(spec.path)) {
      yield { key: rel, text: fs.readFileSync(path.join(spec.path, rel), 'utf8') };
    }
    return;
  }
  for await (const line of readJsonl<Record<string, unknown>>(spec.path)) {
    const v = line.value;
    const where = `${spec.path}:${line.lineNumber}`;
    const problem =
      typeof v !== 'object' || v === null || Array.isArray(v) ? 'expected a JSON object' : typeof v.text !== 'string' ? 'field "text" must be a string' : undefined;
    if (problem || !v) {
      invalidLine(`${where}: ${problem}`);
      continue;
    }
    let key: string;
    if (spec.kind === 'ndl') {
      if (typeof v.id !== 'string' && typeof v.id !== 'number') {
        invalidLine(`${where}: NDL document needs an "id" (string or number)`);
        continue;
      }
      // Repository-level documents split by repository (never by trajectory): `repo`.
      key = typeof v.repo === 'string' ? `repo:${v.repo}` : String(v.id);
    } else {
      const id = v.id ?? v.path;
      key = typeof id === 'string' || typeof id === 'number' ? String(id) : `line:${line.lineNumber}`;
    }
    yield { key, text: v.text as string };
  }
}


export interface Sidecar {
  file: string;
  content: Record<string, unknown>;
  python: string | null;
  generator: unknown;
}

/**
 * Metadata written next to an input by the stage that produced it, passed through to the
 * manifest: `PATH.manifest.json`, `PATH-without-extension.manifest.json`, or for a directory
 * `PATH/manifest.json`. Python version and generator config are picked from common field names.
 */
export function readSidecar(spec: SourceSpec): Sidecar | null {
  const candidates = fs.statSync(spec.path).isDirectory()
    ? [path.join(spec.path, 'manifest.json')]
    : [`${spec.path}.manifest.json`, `${spec.path.replace(/\.[^./]+$/, '')}.manifest.json`];
  const file = candidates.find((c) => fs.existsSync(c));
  if (!file) return null;
  let content: unknown;
  try {
    content = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UserError(`sidecar manifest ${file}: invalid JSON (${(e as Error).message})`);
  }
  if (typeof content !== 'object' || content === null || Array.isArray(content)) {
    throw new UserError(`sidecar manifest ${file}: expected a JSON object`);
  }
  const c = content as Record<string, unknown>;
  const py = c.python ?? c.pythonVersion ?? c.python_version;
  return {
    file,
    content: c,
    python: typeof py === 'string' ? py : py !== undefined ? JSON.stringify(py) : null,
    generator: c.generator ?? c.config ?? c.sampler ?? null,
  };
}

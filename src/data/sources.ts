/**
 * Where documents come from. A source is `NAME=PATH[:kind[:column]]`:
 * - ndl:  `{id, direction, actions, text}` records (written by `ndbg ndl`); the split key is
 *         `id`, or `repo` for repository-level documents (docs/data.md, "Repository-level documents").
 * - code: a directory of .py files (walked as src/data/walk.ts says, sorted by relative path;
 *         key = path) or records with a text field (key = `id` or `path` when present, else the
 *         record's position).
 * - text: records with a text field (web text; key as for code records).
 * Records are read from JSONL, `.jsonl.gz`, `.jsonl.zst`, parquet or Arrow IPC files, told
 * apart by their first bytes (src/data/corpus_readers.ts), or from a directory of such files
 * (a `text` source, one that names a column, or a `datasets` save_to_disk directory). The text
 * is the field or column `text` unless the spec names another. Documents are yielded in file
 * order, which together with in-order packing makes builds deterministic.
 */
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { invalidLine } from '../util/jsonl';
import { isDatasetsDirectory, listCorpusFiles } from './corpus_format';
import { readCorpusRecords, type CorpusRecord } from './corpus_readers';
import { DEFAULT_MAX_FILE_BYTES, emptyWalkReport, walkCodeTree, type WalkReport } from './walk';

export const SOURCE_KINDS = ['ndl', 'code', 'text'] as const;
export type SourceKind = (typeof SOURCE_KINDS)[number];

export interface SourceSpec {
  name: string;
  path: string;
  kind: SourceKind;
  /** The field or column holding the document (default `text`); code and text sources only. */
  column?: string;
}

export interface SourceDocument {
  /** Stable identity used for the train/validation split (so the split survives reordering). */
  key: string;
  text: string;
}

export const DEFAULT_TEXT_COLUMN = 'text';
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const isKind = (k: string | undefined): k is SourceKind => (SOURCE_KINDS as readonly string[]).includes(k ?? '');
const COLUMN_HINT = 'Name the text column with NAME=PATH:kind:COLUMN, e.g. web=dump.parquet:text:content.';

/**
 * Parses `NAME=PATH[:kind[:column]]`; without a kind a directory is `code` (a `datasets`
 * save_to_disk directory: `text`) and a file is `text`. A path that itself contains ':' still
 * works when it exists as given.
 */
export function parseSourceSpec(spec: string): SourceSpec {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new UserError(`--source ${spec}: expected NAME=PATH[:kind[:column]], e.g. traces=out/ndl.jsonl:ndl`);
  const name = spec.slice(0, eq);
  if (!NAME_RE.test(name)) throw new UserError(`--source ${spec}: name "${name}" must be letters, digits, _ . - (used in file names)`);
  let p = spec.slice(eq + 1);
  let kind: SourceKind | undefined;
  let column: string | undefined;
  const parts = p.split(':');
  const last = parts[parts.length - 1];
  if (parts.length >= 2 && isKind(last) && parts.slice(0, -1).join(':')) {
    kind = last;
    p = parts.slice(0, -1).join(':');
  } else if (parts.length >= 3 && isKind(parts[parts.length - 2]) && parts.slice(0, -2).join(':') && !fs.existsSync(p)) {
    kind = parts[parts.length - 2] as SourceKind;
    column = last;
    p = parts.slice(0, -2).join(':');
    if (!column) throw new UserError(`--source ${spec}: empty column name after ":${kind}:"`);
  } else if (parts.length >= 2 && parts[0] && !fs.existsSync(p)) {
    throw new UserError(`--source ${spec}: unknown kind "${last}" (expected NAME=PATH[:kind[:column]], kind one of ${SOURCE_KINDS.join(', ')})`);
  }
  if (!p) throw new UserError(`--source ${spec}: empty path`);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(p);
  } catch {
    throw new UserError(`--source ${spec}: ${p} does not exist`);
  }
  kind ??= stat.isDirectory() ? (isDatasetsDirectory(p) ? 'text' : 'code') : 'text';
  if (column !== undefined && kind === 'ndl') throw new UserError(`--source ${spec}: ndl sources always read the field "text"; a column can be named for code and text sources`);
  if (stat.isDirectory() && kind === 'ndl') throw new UserError(`--source ${spec}: ${p} is a directory; ndl sources are files`);
  return column === undefined ? { name, path: p, kind } : { name, path: p, kind, column };
}

export interface ReadOptions {
  /** Directory code sources: larger .py files are skipped (default 1 MiB). */
  maxFileBytes?: number;
  /** Filled in with what a directory code source's walk kept and skipped. */
  walkReport?: WalkReport;
}

/** A directory read as a source tree of .py files (not as a directory of corpus files). */
export function isSourceTree(spec: SourceSpec): boolean {
  return spec.kind === 'code' && spec.column === undefined && fs.statSync(spec.path).isDirectory() && !isDatasetsDirectory(spec.path);
}

export async function* readDocuments(spec: SourceSpec, opts: ReadOptions = {}): AsyncGenerator<SourceDocument> {
  if (isSourceTree(spec)) {
    const report = opts.walkReport ?? emptyWalkReport();
    for (const f of walkCodeTree(spec.path, { maxFileBytes: opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES }, report)) yield { key: f.rel, text: f.text };
    return;
  }
  if (fs.statSync(spec.path).isDirectory()) {
    const files = listCorpusFiles(spec.path);
    if (!files.length) throw new UserError(`source ${spec.name}: ${spec.path} holds no corpus files (.parquet, .arrow, .jsonl, .jsonl.gz, .jsonl.zst)`);
    // Positional keys are per file, so adding a file to the directory moves no other document across the split.
    for (const rel of files) yield* documentsOfFile(spec, path.join(spec.path, rel), `${rel}:`);
    return;
  }
  yield* documentsOfFile(spec, spec.path, '');
}

async function* documentsOfFile(spec: SourceSpec, file: string, keyPrefix: string): AsyncGenerator<SourceDocument> {
  const column = spec.column ?? DEFAULT_TEXT_COLUMN;
  for await (const rec of readCorpusRecords(file, { text: column, optional: ['id', 'path', 'repo'] }, COLUMN_HINT)) {
    const doc = toDocument(spec, rec, column, keyPrefix);
    if (doc) yield doc;
  }
}

const isIdValue = (v: unknown): v is string | number | bigint => typeof v === 'string' || typeof v === 'number' || typeof v === 'bigint';

/** The document a record holds, or undefined after reporting why it holds none (invalidLine). */
function toDocument(spec: SourceSpec, rec: CorpusRecord, column: string, keyPrefix: string): SourceDocument | undefined {
  const v = rec.value as Record<string, unknown> | null | undefined;
  const problem =
    typeof v !== 'object' || v === null || Array.isArray(v) ? 'expected a JSON object' : typeof v[column] !== 'string' ? `field "${column}" must be a string` : undefined;
  if (problem || !v) {
    invalidLine(`${rec.where}: ${problem}`);
    return undefined;
  }
  let key: string;
  if (spec.kind === 'ndl') {
    if (typeof v.id !== 'string' && typeof v.id !== 'number') {
      invalidLine(`${rec.where}: NDL document needs an "id" (string or number)`);
      return undefined;
    }
    // Repository-level documents split by repository (never by trajectory): `repo`.
    key = typeof v.repo === 'string' ? `repo:${v.repo}` : String(v.id);
  } else {
    const id = v.id ?? v.path;
    key = isIdValue(id) ? String(id) : `${keyPrefix}line:${rec.position}`;
  }
  return { key, text: v[column] as string };
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

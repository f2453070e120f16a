import { listPythonFiles } from '../util/files';
import * as fs from 'fs';
import * as path from 'path';
import type { ProgramRecord } from './types';
import { UserError } from '../util/errors';
import { invalidLine, readJsonl, skippingInvalid } from '../util/jsonl';

/**
 * Corpus loaders. Program corpora become ProgramRecords `{id, code, input, entry?, output?}`;
 * text corpora become `{id, text}` documents for the web/code mixture (the data stage reads
 * the same JSONL `{text}` shape). Malformed input is reported with file and line (or entry
 * index), every problem at once, in one UserError.
 */
export interface TextDocument {
  id: string;
  text: string;
}

const IDENT = /^[A-Za-z_]\w*$/;
const MAX_PROBLEMS_SHOWN = 10;

/**
 * Every problem at once in one UserError; under --skip-invalid the bad lines are skipped and
 * counted instead (the caller has left them out).
 */
function failUnlessSkipping(file: string, problems: string[]): void {
  if (!problems.length) return;
  if (!skippingInvalid()) fail(file, problems, ' (pass --skip-invalid to skip such lines)');
  for (const p of problems) invalidLine(`${file}: ${p}`);
}

function fail(file: string, problems: string[], hint = ''): never {
  // One problem: one line, `file:N: what` like every other bad input line.
  if (problems.length === 1) throw new UserError(`${file}${problems[0].replace(/^line (\d+): /, ':$1: ').replace(/^(?!:)/, ': ')}${hint}`);
  const shown = problems.slice(0, MAX_PROBLEMS_SHOWN).map((p) => `  ${p}`);
  const more = problems.length > MAX_PROBLEMS_SHOWN ? [`  ... and ${problems.length - MAX_PROBLEMS_SHOWN} more`] : [];
  throw new UserError(`${file}: ${problems.length} malformed record${problems.length === 1 ? '' : 's'}${hint}:\n${[...shown, ...more].join('\n')}`);
}

function exists(file: string, what: string): void {
  if (!fs.existsSync(file)) throw new UserError(`${what} ${file} does not exist`);
}

const LONE_SURROGATE = /\p{Cs}/u;

/** Checks one CruxEval-format object; returns the problems (empty when valid). */
export function programRecordProblems(v: unknown): string[] {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return ['expected a JSON object'];
  const o = v as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof o.id !== 'string' || o.id === '') problems.push('field "id" must be a non-empty string');
  if (typeof o.code !== 'string' || o.code.trim() === '') problems.push('field "code" must be a non-empty string');
  if (typeof o.input !== 'string') problems.push('field "input" must be a string (the argument text of f(INPUT))');
  if (o.output !== undefined && typeof o.output !== 'string') problems.push('field "output" must be a string when present');
  if (o.entry !== undefined && (typeof o.entry !== 'string' || !IDENT.test(o.entry))) problems.push('field "entry" must be a Python identifier when present');
  // Python source is UTF-8: a lone surrogate (JSON "\udbff") cannot be encoded, so the code
  // would not compile in one tracer and reach the other as U+FFFD. Escaped in a literal it is fine.
  for (const field of ['code', 'input', 'output'] as const) {
    if (typeof o[field] === 'string' && LONE_SURROGATE.test(o[field] as string)) problems.push(`field "${field}" holds a lone surrogate (write it as an escape inside the string literal, e.g. '\\udbff')`);
  }
  return problems;
}

/** CruxEval-format JSONL: one `{id, code, input, output?, entry?}` per line; ids must be unique. */
export async function loadCruxEvalJsonl(file: string): Promise<ProgramRecord[]> {
  exists(file, 'program file');
  const out: ProgramRecord[] = [];
  const problems: string[] = [];
  const ids = new Map<string, number>();
  for await (const line of readJsonl<Record<string, unknown>>(file, { invalid: 'yield' })) {
    if (line.error) {
      problems.push(`line ${line.lineNumber}: invalid JSON`);
      continue;
    }
    const p = programRecordProblems(line.value);
    if (p.length) {
      problems.push(`line ${line.lineNumber}: ${p.join('; ')}`);
      continue;
    }
    const v = line.value!;
    const rec: ProgramRecord = { id: v.id as string, code: v.code as string, input: v.input as string };
    if (v.entry !== undefined) rec.entry = v.entry as string;
    if (v.output !== undefined) rec.output = v.output as string;
    const prev = ids.get(rec.id);
    if (prev !== undefined) {
      problems.push(`line ${line.lineNumber}: duplicate id "${rec.id}" (first on line ${prev})`);
      continue;
    }
    ids.set(rec.id, line.lineNumber);
    out.push(rec);
  }
  failUnlessSkipping(file, problems);
  return out;
}

/** `fname(args)` -> entry and input text. */
export function parseCall(call: string): { entry: string; input: string } | undefined {
  const m = /^\s*([A-Za-z_]\w*)\s*\(([\s\S]*)\)\s*$/.exec(call);
  return m ? { entry: m[1], input: m[2].trim() } : undefined;
}

/**
 * A directory of .py files plus a list of entry calls, as a JSON array or JSONL, each entry
 * `{"file": "add.py", "call": "add(2, 3)"}` or `{"file": "add.py", "entry": "add", "input": "2, 3"}`,
 * optionally with `"id"` (default `<file stem>-<k>`, k counting that file's calls).
 */
export async function loadPyDirectory(dir: string, callsFile: string): Promise<ProgramRecord[]> {
  exists(dir, 'program directory');
  exists(callsFile, 'calls file');
  const entries: Array<{ where: string; value: unknown }> = [];
  if (callsFile.endsWith('.jsonl')) {
    const bad: string[] = [];
    for await (const line of readJsonl(callsFile, { invalid: 'yield' })) {
      if (line.error) bad.push(`line ${line.lineNumber}: invalid JSON`);
      else entries.push({ where: `line ${line.lineNumber}`, value: line.value });
    }
    failUnlessSkipping(callsFile, bad);
  } else {
    let arr: unknown;
    try {
      arr = JSON.parse(fs.readFileSync(callsFile, 'utf8'));
    } catch (e) {
      throw new UserError(`${callsFile}: invalid JSON (${(e as Error).message})`);
    }
    if (!Array.isArray(arr)) throw new UserError(`${callsFile}: expected a JSON array of calls (or use a .jsonl file)`);
    arr.forEach((value, i) => entries.push({ where: `entry ${i}`, value }));
  }
  const root = path.resolve(dir);
  const problems: string[] = [];
  const out: ProgramRecord[] = [];
  const perFile = new Map<string, number>();
  const codeCache = new Map<string, string>();
  const ids = new Set<string>();
  for (const { where, value } of entries) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.push(`${where}: expected an object {file, call} or {file, entry, input}`);
      continue;
    }
    const o = value as Record<string, unknown>;
    if (typeof o.file !== 'string' || !o.file.endsWith('.py')) {
      problems.push(`${where}: field "file" must be the name of a .py file in ${dir}`);
      continue;
    }
    const full = path.resolve(root, o.file);
    if (!full.startsWith(root + path.sep)) {
      problems.push(`${where}: file "${o.file}" is outside ${dir}`);
      continue;
    }
    let call: { entry: string; input: string } | undefined;
    if (typeof o.call === 'string') {
      call = parseCall(o.call);
      if (!call) problems.push(`${where}: field "call" must look like name(args), got ${JSON.stringify(o.call)}`);
    } else if (typeof o.input === 'string') {
      const entry = o.entry ?? 'f';
      if (typeof entry !== 'string' || !IDENT.test(entry)) problems.push(`${where}: field "entry" must be a Python identifier`);
      else call = { entry, input: o.input };
    } else problems.push(`${where}: needs "call" (e.g. "add(2, 3)") or "input" (with optional "entry")`);
    if (!call) continue;
    if (!codeCache.has(full)) {
      if (!fs.existsSync(full)) {
        problems.push(`${where}: ${path.join(dir, o.file)} does not exist`);
        continue;
      }
      codeCache.set(full, fs.readFileSync(full, 'utf8'));
    }
    const k = perFile.get(o.file) ?? 0;
    perFile.set(o.file, k + 1);
    const id = typeof o.id === 'string' && o.id ? o.id : `${o.file.replace(/\.py$/, '')}-${k}`;
    if (ids.has(id)) problems.push(`${where}: duplicate id "${id}"`);
    ids.add(id);
    const rec: ProgramRecord = { id, code: codeCache.get(full)!, input: call.input };
    if (call.entry !== 'f') rec.entry = call.entry;
    out.push(rec);
  }
  if (problems.length) fail(callsFile, problems);
  return out;
}

/** Plain JSONL text, one `{text}` per line (optional string `id`; default `<file>:<line>`). */
export async function* readTextJsonl(file: string): AsyncGenerator<TextDocument> {
  exists(file, 'text file');
  for await (const line of readJsonl<Record<string, unknown>>(file)) {
    const where = `${file}:${line.lineNumber}`;
    if (line.error) throw new UserError(`${where}: invalid JSON`);
    const v = line.value;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new UserError(`${where}: expected a JSON object {"text": ...}`);
    if (typeof v.text !== 'string') throw new UserError(`${where}: field "text" must be a string`);
    if (v.id !== undefined && typeof v.id !== 'string') throw new UserError(`${where}: field "id" must be a string when present`);
    yield { id: (v.id as string | undefined) ?? `${path.basename(file)}:${line.lineNumber}`, text: v.text };
  }
}

/**
 * The .py files under `dir` (recursively, sorted by relative path, symlinks not followed) as
 * text documents with their relative path as id: e.g. the Python standard library as the code
 * source of the mixture. Files over `maxBytes` or not valid UTF-8 are skipped and counted.
 */
export function* pySourceDocuments(dir: string, opts: { maxBytes?: number; skipped?: { count: number } } = {}): Generator<TextDocument> {
  exists(dir, 'source directory');
  const maxBytes = opts.maxBytes ?? 1 << 20;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (const rel of listPythonFiles(dir)) {
    const full = path.join(dir, rel);
    const size = fs.statSync(full).size;
    let text: string | undefined;
    if (size <= maxBytes) {
      try {
        text = decoder.decode(fs.readFileSync(full));
      } catch {
        text = undefined;
      }
    }
    if (text === undefined) {
      if (opts.skipped) opts.skipped.count++;
      continue;
    }
    yield { id: rel, text };
  }
}


/**
 * Seeded sampling of tokenizer training text from the configured sources. Every item (a JSONL
 * line, a .py file, a program) gets two draws from `Rng.from(seed, 'tokenizer-sample', source,
 * key)`: one decides whether it is held out for evaluation, the other whether it is kept for
 * training. Keys are stable (line numbers, paths relative to the source root, program ids), so
 * the same config gives the same sample on any machine, in any order, and the benchmark can
 * rebuild the held-out set from the manifest.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { readJsonl } from '../util/jsonl';
import { Rng } from '../util/rng';
import { SourceConfig, sourceRole } from './config';
import { programDocuments, readPrograms } from './programs-source';

export interface SampleOptions {
  seed: number;
  heldOutFraction: number;
  heldOutMaxBytes: number;
  /** Resolves relative paths (the config's working directory). */
  cwd?: string;
}

export interface SourceSample {
  name: string;
  kind: SourceConfig['kind'];
  role: 'ndl' | 'code' | 'text';
  /** What was read: resolved paths, file/document counts. */
  description: Record<string, unknown>;
  train: string[];
  heldOut: string[];
  trainBytes: number;
  heldOutBytes: number;
}

interface Item {
  key: string;
  /** Read lazily: only items that are drawn get read (python files). */
  text: () => string | undefined;
  /** Size estimate for the keep probability. */
  bytes: number;
}

export function sourceName(src: SourceConfig, index: number): string {
  return src.name ?? `${src.kind}${index}`;
}

export async function sampleSource(src: SourceConfig, index: number, opts: SampleOptions): Promise<SourceSample> {
  const name = sourceName(src, index);
  const { items, description } = await listItems(src, opts.cwd ?? process.cwd());
  const total = items.reduce((s, it) => s + it.bytes, 0);
  // Keep probabilities aim slightly above the budget; the byte cap then stops exactly at it.
  const pTrain = Math.min(1, (1.05 * src.maxBytes) / Math.max(1, total * (1 - opts.heldOutFraction)));
  const pHeld = Math.min(1, (1.05 * opts.heldOutMaxBytes) / Math.max(1, total * opts.heldOutFraction));
  const out: SourceSample = { name, kind: src.kind, role: sourceRole(src.kind), description, train: [], heldOut: [], trainBytes: 0, heldOutBytes: 0 };
  let skipped = 0;
  for (const item of items) {
    const rng = Rng.from(opts.seed, 'tokenizer-sample', name, item.key);
    const held = rng.next() < opts.heldOutFraction;
    const keep = rng.next() < (held ? pHeld : pTrain);
    if (!keep) continue;
    const room = held ? opts.heldOutMaxBytes - out.heldOutBytes : src.maxBytes - out.trainBytes;
    if (item.bytes > room) continue; // a smaller later item may still fit
    const text = item.text();
    if (text === undefined) {
      skipped++;
      continue;
    }
    const n = Buffer.byteLength(text, 'utf8');
    if (n > room) continue;
    if (held) {
      out.heldOut.push(text);
      out.heldOutBytes += n;
    } else {
      out.train.push(text);
      out.trainBytes += n;
    }
  }
  description.items = items.length;
  if (skipped) description.skippedNotUtf8 = skipped;
  return out;
}

async function listItems(src: SourceConfig, cwd: string): Promise<{ items: Item[]; description: Record<string, unknown> }> {
  switch (src.kind) {
    case 'ndl':
    case 'jsonl': {
      const file = path.resolve(cwd, src.path);
      if (!fs.existsSync(file)) throw new UserError(`tokenizer source ${src.kind}: ${file} does not exist`);
      const items: Item[] = [];
      for await (const line of readJsonl<Record<string, unknown>>(file)) {
        if (line.error) throw new UserError(line.error);
        const text = line.value?.[src.field];
        if (typeof text !== 'string') {
          throw new UserError(`${file}:${line.lineNumber}: field "${src.field}" is missing or not a string`);
        }
        items.push({ key: `line${line.lineNumber}`, text: () => text, bytes: Buffer.byteLength(text, 'utf8') });
      }
      return { items, description: { path: file, field: src.field } };
    }
    case 'python': {
      const items: Item[] = [];
      const roots: string[] = [];
      for (const p of src.paths) {
        const root = p === '@stdlib' ? pythonStdlib() : path.resolve(cwd, p);
        if (!fs.existsSync(root)) throw new UserError(`tokenizer source python: ${root} does not exist`);
        roots.push(root);
        for (const file of listPythonFiles(root, src.exclude)) {
          // Keys relative to the root: the same files are drawn wherever the stdlib is installed.
          const rel = fs.statSync(root).isDirectory() ? path.relative(root, file) : path.basename(file);
          items.push({ key: `${p}:${rel}`, text: () => readUtf8(file), bytes: fs.statSync(file).size });
        }
      }
      return { items, description: { paths: src.paths, resolved: roots, exclude: src.exclude } };
    }
    case 'programs': {
      const file = path.resolve(cwd, src.path);
      if (!fs.existsSync(file)) throw new UserError(`tokenizer source programs: ${file} does not exist`);
      const docs = programDocuments(readPrograms(file));
      const items = docs.map(([id, text]) => ({ key: id, text: () => text, bytes: Buffer.byteLength(text, 'utf8') }));
      return { items, description: { path: file, format: 'forward all-step_into documents, traced in-process' } };
    }
  }
}

/** The standard library directory of the `python3` on PATH. */
export function pythonStdlib(): string {
  try {
    return execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])']).toString().trim();
  } catch (e) {
    throw new UserError(`cannot locate the Python standard library (python3 failed: ${(e as Error).message})`);
  }
}

/** *.py files under root (or root itself), sorted, skipping paths that contain an excluded substring. */
export function listPythonFiles(root: string, exclude: string[]): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    if (exclude.some((x) => x && p.includes(x))) return;
    const st = fs.statSync(p);
    if (st.isDirectory()) {
      for (const name of fs.readdirSync(p).sort()) walk(path.join(p, name));
    } else if (st.isFile() && p.endsWith('.py')) out.push(p);
  };
  walk(root);
  return out;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function readUtf8(file: string): string | undefined {
  try {
    let text = strictUtf8.decode(fs.readFileSync(file));
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return text;
  } catch {
    return undefined; // not UTF-8 (a few stdlib test files are latin-1 on purpose)
  }
}

/**
 * Drops documents of any source kind that contain a program of an evaluation set (CruxEval
 * format, as `ndbg programs decontaminate --against` reads it), by two rules:
 *
 * - **program key**: the document defines every top-level function of the eval program with
 *   the same normalized AST (src/programs/splits.ts `programKey`: names alpha-renamed,
 *   docstrings and annotations dropped) — the rule `ndbg programs` splits and decontaminates
 *   programs by, applied to the functions found in the document (src/data/python_functions.ts).
 *   Only functions of an eval function's shape are parsed, by Python, in one process per batch.
 * - **lines**: the document holds `min(n, 6)` consecutive lines of the n-line eval program,
 *   compared after trimming and collapsing whitespace, blank and comment lines left out; for
 *   copies whose indentation was lost (web text), which the AST rule cannot parse. Programs of
 *   fewer than 3 such lines are matched by the program key only: two lines are too common.
 *
 * For an NDL document the text searched is its code context (the program it debugs).
 */
import { programKey } from '../programs/splits';
import { codeFacts } from '../programs/normalize';
import { loadCruxEvalJsonl } from '../programs/loaders';
import { STRUCTURE_TOKENS } from '../ndl/tokens';
import { UserError } from '../util/errors';
import { findFunctions, functionShape } from './python_functions';
import type { SourceKind } from './sources';

export const LINE_WINDOW = 6;
export const MIN_MATCHED_LINES = 3;
/** Parsed functions remembered across batches (NDL documents repeat their program many times). */
const KEY_CACHE_LIMIT = 200_000;

export interface EvalProgram {
  id: string;
  code: string;
}

function normalizedLines(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/\s+/g, ' ');
    if (line && !line.startsWith('#')) out.push(line);
  }
  return out;
}

/** The text a document's contamination is searched in. */
export function searchedText(kind: SourceKind, text: string): string {
  if (kind !== 'ndl') return text;
  const start = text.indexOf(STRUCTURE_TOKENS.traceContextStart);
  if (start < 0) return text;
  const from = start + STRUCTURE_TOKENS.traceContextStart.length;
  const end = text.indexOf(STRUCTURE_TOKENS.frameSep, from);
  return text.slice(from, end < 0 ? undefined : end);
}

async function keysOf(codes: string[]): Promise<string[]> {
  let facts;
  try {
    facts = await codeFacts(codes);
  } catch (e) {
    throw new UserError(`decontamination needs python3 on PATH to parse functions (${(e as Error).message.split('\n')[0]})`);
  }
  return codes.map((c, i) => programKey(c, facts[i]));
}

export interface ContaminatedDocument {
  /** Ids of the eval programs the document contains. */
  evalIds: string[];
}

export class Decontaminator {
  private readonly keyCache = new Map<string, string>();

  private constructor(
    /** Shapes of eval functions: a document function of another shape cannot match. */
    private readonly shapes: Set<string>,
    /** Program key of an eval function -> the eval programs that define it. */
    private readonly programsByKey: Map<string, string[]>,
    /** Eval program -> the keys of all its top-level functions. */
    private readonly keysNeeded: Map<string, Set<string>>,
    /** Line-window length -> joined window -> eval program ids. */
    private readonly windows: Map<number, Map<string, string[]>>,
    readonly programs: number,
  ) {}

  static async fromFiles(files: string[]): Promise<Decontaminator> {
    const programs: EvalProgram[] = [];
    for (const f of files) programs.push(...(await loadCruxEvalJsonl(f)).map((r) => ({ id: files.length > 1 ? `${f}:${r.id}` : r.id, code: r.code })));
    return Decontaminator.fromPrograms(programs);
  }

  static async fromPrograms(programs: EvalProgram[]): Promise<Decontaminator> {
    const functions = programs.map((p) => findFunctions(p.code).filter((f) => f.indent === 0).map((f) => f.code));
    const keys = await keysOf(functions.flat());
    const shapes = new Set(functions.flat().map(functionShape));
    const programsByKey = new Map<string, string[]>();
    const keysNeeded = new Map<string, Set<string>>();
    let k = 0;
    programs.forEach((p, i) => {
      const mine = new Set(keys.slice(k, k + functions[i].length));
      k += functions[i].length;
      if (!mine.size) return;
      keysNeeded.set(p.id, mine);
      for (const key of mine) programsByKey.set(key, [...(programsByKey.get(key) ?? []), p.id]);
    });
    const windows = new Map<number, Map<string, string[]>>();
    for (const p of programs) {
      const lines = normalizedLines(p.code);
      if (lines.length < MIN_MATCHED_LINES) continue;
      const w = Math.min(lines.length, LINE_WINDOW);
      const byWindow = windows.get(w) ?? new Map<string, string[]>();
      windows.set(w, byWindow);
      for (let i = 0; i + w <= lines.length; i++) {
        const joined = lines.slice(i, i + w).join('\n');
        const ids = byWindow.get(joined) ?? [];
        if (!ids.includes(p.id)) ids.push(p.id);
        byWindow.set(joined, ids);
      }
    }
    return new Decontaminator(shapes, programsByKey, keysNeeded, windows, programs.length);
  }

  private lineMatches(text: string, into: Set<string>): void {
    if (!this.windows.size) return;
    const lines = normalizedLines(text);
    for (const [w, byWindow] of this.windows) {
      for (let i = 0; i + w <= lines.length; i++) {
        const ids = byWindow.get(lines.slice(i, i + w).join('\n'));
        if (ids) ids.forEach((id) => into.add(id));
      }
    }
  }

  /** For each text of the batch, the eval programs it contains (undefined: clean). */
  async check(texts: string[]): Promise<Array<ContaminatedDocument | undefined>> {
    const candidates = texts.map((t) => findFunctions(t).map((f) => f.code).filter((c) => this.shapes.has(functionShape(c))));
    let unknown = [...new Set(candidates.flat().filter((c) => !this.keyCache.has(c)))];
    if (this.keyCache.size + unknown.length > KEY_CACHE_LIMIT) {
      this.keyCache.clear();
      unknown = [...new Set(candidates.flat())];
    }
    if (unknown.length) {
      const keys = await keysOf(unknown);
      unknown.forEach((c, i) => this.keyCache.set(c, keys[i]));
    }
    return texts.map((text, d) => {
      const found = new Set<string>();
      const present = new Set(candidates[d].map((c) => this.keyCache.get(c)!));
      for (const key of present) {
        for (const id of this.programsByKey.get(key) ?? []) {
          if ([...this.keysNeeded.get(id)!].every((k) => present.has(k))) found.add(id);
        }
      }
      this.lineMatches(text, found);
      return found.size ? { evalIds: [...found].sort() } : undefined;
    });
  }
}

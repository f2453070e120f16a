/**
 * The program text as `ndbg debug` shows it: where a predicted SRC sits (line number and
 * function, for pdb's one line of context), the `list` view, `b LINE`/`b TEXT` resolution and
 * the call rebuilt from an inv_call frame's arguments. Everything here reads only the CONTEXT
 * text, never the real run, so the model's side of the display owes nothing to the tracer.
 */
import { statementLines, SourceLine } from '../debugger/source';

export interface Location {
  /** 1-based line in the CONTEXT; undefined when the predicted SRC is no line of the program. */
  line?: number;
  /** Name of the innermost `def` around the line (`?` when unknown, `<module>` outside any). */
  func: string;
}

interface FunctionSpan {
  name: string;
  /** Line of the `def` header. */
  def: number;
  /** Last line of the body. */
  end: number;
}

export class ProgramSource {
  readonly lines: string[];
  readonly statements: SourceLine[];
  private readonly functions: FunctionSpan[];

  constructor(readonly context: string) {
    // The CONTEXT ends with "\n": the empty string after it is no line of the program.
    this.lines = context.replace(/\n$/, '').split('\n');
    this.statements = statementLines(context);
    this.functions = functionSpans(this.lines);
  }

  /** Innermost function whose header or body holds `line`. */
  functionAt(line: number): FunctionSpan | undefined {
    let best: FunctionSpan | undefined;
    for (const f of this.functions) if (f.def <= line && line <= f.end && (!best || f.def > best.def)) best = f;
    return best;
  }

  /** Whether the function whose header is at `def` sits inside another function's body. */
  isNested(def: number): boolean {
    return this.functions.some((f) => f.def < def && def <= f.end);
  }

  /** The lines `def`..`end` of the function whose header or body holds `line`, innermost; undefined outside any. */
  functionText(line: number): string | undefined {
    const f = this.functionAt(line);
    return f && this.lines.slice(f.def - 1, f.end).join('\n');
  }

  /**
   * Where a frame with SRC `src` is. The SRC text alone can be ambiguous (`fruits.pop()` twice in
   * one function, `for c in s:` in two): then lines in the same function as the previous stop
   * win, and among those the previous stop's own line, else the next one after it (the one
   * before it, stepping backwards), as execution mostly moves on to the nearest such line. The
   * text cannot tell an `if` branch from its `else` twin, so there the number is a guess. `known` is a line known to be right
   * (the first frame of a session comes from the real run).
   */
  locate(src: string, isCall: boolean, previous: Location | undefined, backwards: boolean, known?: number): Location {
    let candidates: number[] = [];
    this.lines.forEach((text, i) => {
      if (text === src) candidates.push(i + 1);
    });
    if (isCall) {
      const defs = candidates.filter((l) => this.functions.some((f) => f.def === l));
      if (defs.length > 0) candidates = defs;
    }
    if (candidates.length === 0) return { func: '?' };
    let line = known !== undefined && candidates.includes(known) ? known : undefined;
    if (line === undefined) {
      const same = previous ? candidates.filter((l) => this.functionAt(l)?.name === previous.func) : [];
      const pool = same.length > 0 ? same : candidates;
      const at = previous?.line ?? (backwards ? Infinity : 0);
      // The same line again: a return frame after its line, an inverse line after its return.
      line = pool.includes(at) ? at : backwards
        ? ([...pool].reverse().find((l) => l < at) ?? pool[pool.length - 1])
        : (pool.find((l) => l > at) ?? pool[0]);
    }
    return { line, func: this.functionAt(line)?.name ?? '<module>' };
  }

  /**
   * A breakpoint argument → the target SRC text: a line number of the shown source, or the
   * text of a statement line (indentation may be left out). Returns an error message (pdb's
   * `*** ` style is added by the caller) when it names no statement.
   */
  breakpointTarget(arg: string): { target: string; line: number } | { error: string } {
    const text = arg.trim();
    if (text === '') return { error: 'b needs a line number or a source line, e.g. "b 4" or "b return n"' };
    if (/^\d+$/.test(text)) {
      const n = Number(text);
      if (n < 1 || n > this.lines.length) return { error: `Line ${n} is out of range (the source has ${this.lines.length} lines; l lists it)` };
      const stmt = this.statements.find((s) => s.line === n);
      if (!stmt) {
        const shown = this.lines[n - 1].trim();
        return { error: `Line ${n} is not a statement inside a function${shown ? ` ("${shown}")` : ' (blank)'}; no line event stops there` };
      }
      return { target: stmt.src, line: n };
    }
    const exact = this.statements.filter((s) => s.src === arg || s.src === text);
    const matches = exact.length > 0 ? exact : this.statements.filter((s) => s.src.trim() === text);
    if (matches.length === 0) return { error: `No statement line reads "${text}" (l lists the source)` };
    const texts = new Set(matches.map((m) => m.src));
    if (texts.size > 1) {
      return { error: `"${text}" is ambiguous: lines ${matches.map((m) => m.line).join(', ')} differ in indentation; use b LINE` };
    }
    return { target: matches[0].src, line: matches[0].line };
  }

  /** The source with line numbers; `->` marks the model's line, `R>` the real one when they differ. */
  listing(modelLine: number | undefined, realLine: number | undefined): string[] {
    const width = String(this.lines.length).length;
    return this.lines.map((text, i) => {
      const n = i + 1;
      const mark = n === modelLine ? '->' : n === realLine ? 'R>' : '  ';
      return `${String(n).padStart(width)} ${mark} ${text}`.trimEnd();
    });
  }
}

function indentOf(text: string): number {
  return text.length - text.trimStart().length;
}

/** Every `def` with the extent of its body (by indentation; blank and comment lines belong to it). */
function functionSpans(lines: string[]): FunctionSpan[] {
  const out: FunctionSpan[] = [];
  lines.forEach((text, i) => {
    const m = /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)/.exec(text);
    if (!m) return;
    const indent = indentOf(text);
    let end = i + 1;
    for (let j = i + 1; j < lines.length; j++) {
      const body = lines[j].trim();
      if (body === '' || body.startsWith('#')) continue;
      if (indentOf(lines[j]) <= indent) break;
      end = j + 1;
    }
    out.push({ name: m[1], def: i + 1, end });
  });
  return out;
}

/** Top-level pieces of a parameter list, split at commas outside brackets and strings. */
export function splitParams(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quote = '';
  let cur = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      cur += c;
      if (c === '\\') cur += text[++i] ?? '';
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    if (c === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/** One parameter of a `def` line: its name and its star (`*args`, `**kwargs`), keyword-only or not. */
interface Parameter {
  name: string;
  star: '' | '*' | '**';
  keywordOnly: boolean;
}

/** The `def` line's name and parameters in the order written; undefined when the line is no whole `def` header. */
function signature(defLine: string): { name: string; params: Parameter[] } | undefined {
  const m = /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((.*)\)\s*(->.*)?:\s*(#.*)?$/.exec(defLine);
  if (!m) return undefined;
  const params: Parameter[] = [];
  let keywordOnly = false;
  for (const raw of splitParams(m[2])) {
    const p = raw.split(/[:=]/)[0].trim();
    if (p === '/') continue;
    if (p === '*') {
      keywordOnly = true;
      continue;
    }
    const star = (/^\*\*?/.exec(p)?.[0] ?? '') as Parameter['star'];
    params.push({ name: p.slice(star.length).trim(), star, keywordOnly });
    if (star === '*') keywordOnly = true;
  }
  return { name: m[1], params };
}

/**
 * The names a call frame's locals hold, in Python's order (the code object's: positional, then
 * keyword-only, then `*args`, then `**kwargs`); undefined when the def line cannot be read.
 */
export function parameterNames(defLine: string): string[] | undefined {
  const params = signature(defLine)?.params;
  if (!params) return undefined;
  const plain = params.filter((p) => p.star === '');
  return [...plain.filter((p) => !p.keywordOnly), ...plain.filter((p) => p.keywordOnly), ...params.filter((p) => p.star === '*'), ...params.filter((p) => p.star === '**')].map((p) => p.name);
}

/**
 * The call an inv_call frame's arguments stand for, e.g. `count('berry', 'r')`, read from the
 * `def` line's signature (positional, `*args`, keyword-only, `**kwargs`). Undefined when the
 * def line cannot be read or an argument is missing from the locals.
 */
export function rebuildCall(defLine: string, args: Record<string, string>): string | undefined {
  const sig = signature(defLine);
  if (!sig) return undefined;
  const parts: string[] = [];
  for (const { name, star, keywordOnly } of sig.params) {
    const value = args[name];
    if (value === undefined) return undefined;
    if (star !== '') parts.push(`${star}${value}`);
    else parts.push(keywordOnly ? `${name}=${value}` : value);
  }
  return `${sig.name}(${parts.join(', ')})`;
}

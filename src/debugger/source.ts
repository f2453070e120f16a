/**
 * The program text as the debugger sees it: the forward and inverse CONTEXT (spec ndl.md §2)
 * and the statement lines inside its functions, which are the breakpoint targets a user could
 * type even when execution never reaches them again.
 */

import type { TraceRecord } from '../trace/types';
import type { Direction } from './vocabulary';

/**
 * The CONTEXT of a trace in a direction (spec ndl.md §2): forward is the program plus `main`,
 * inverse the program alone; a repository-level trace's is its multi-file SRC alone both ways.
 */
export function traceContext(trace: Pick<TraceRecord, 'code' | 'entry_call' | 'level'>, direction: Direction): string {
  if (direction === 'inverse' || trace.level === 'repository') return inverseContext(trace.code);
  return forwardContext(trace.code, trace.entry_call);
}

/** The forward CONTEXT: the program plus the `main` wrapper; same text as the tracer's build_context. */
export function forwardContext(code: string, entryCall: string): string {
  return code.replace(/\n+$/, '') + '\n\ndef main():\n    return ' + entryCall + '\n';
}

/** The inverse CONTEXT: the program alone (no `main`). */
export function inverseContext(code: string): string {
  return code.replace(/\n+$/, '') + '\n';
}

export interface SourceLine {
  /** 1-based line number in the CONTEXT (repository-level: in `file`). */
  line: number;
  /** Repository-level only: the file (relative to the root) the line is in. */
  file?: string;
  /** The line's text, indentation kept. */
  src: string;
}

/**
 * Clause headers that compile to no instruction of their own in CPython 3.11, so they never get
 * a line event and a breakpoint on them never fires; they are left out of the targets.
 */
const NO_EVENT_HEADER = /^\s*(else|finally)\s*:\s*(#.*)?$/;
const STRING_STATEMENT = /^\s*[rRbBuUfF]{0,2}('''|""")/;

/**
 * The first physical line of every logical line (statement) that sits inside a `def` body, at
 * any nesting (methods, closures, main). A light lexer tracks strings, comments, brackets and
 * backslash continuations, so continuation lines and the inside of multi-line strings are not
 * statements. Left out: blank and comment lines, docstrings (pdb refuses breakpoints on lines
 * that start with a triple quote) and `else:`/`finally:` headers (no line event in 3.11).
 */
export function statementLines(context: string): SourceLine[] {
  const lines = context.split('\n');
  const out: SourceLine[] = [];
  const blocks: Array<{ indent: number; isDef: boolean }> = [];
  let quote = ''; // open string delimiter carried over from earlier lines
  let brackets = 0;
  let backslash = false;
  for (let n = 0; n < lines.length; n++) {
    const text = lines[n];
    const logicalStart = quote === '' && brackets === 0 && !backslash;
    if (logicalStart) {
      const body = text.trimStart();
      if (body !== '' && !body.startsWith('#')) {
        const indent = text.length - body.length;
        while (blocks.length > 0 && blocks[blocks.length - 1].indent >= indent) blocks.pop();
        const inFunction = blocks.some((b) => b.isDef);
        if (inFunction && !NO_EVENT_HEADER.test(text) && !STRING_STATEMENT.test(text)) out.push({ line: n + 1, src: text });
        const header = /^(async\s+def|def|class)\b/.exec(body);
        if (header) blocks.push({ indent, isDef: header[1] !== 'class' });
      }
    }
    ({ quote, brackets, backslash } = scanLine(text, quote, brackets));
  }
  return out;
}

/** Lexer state after one physical line. */
function scanLine(text: string, quote: string, brackets: number): { quote: string; brackets: number; backslash: boolean } {
  let i = 0;
  let commented = false;
  while (i < text.length) {
    const c = text[i];
    if (quote !== '') {
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (text.startsWith(quote, i)) {
        i += quote.length;
        quote = '';
        continue;
      }
      i++;
      continue;
    }
    if (c === '#') {
      commented = true;
      break;
    }
    if (c === '"' || c === "'") {
      quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      i += quote.length;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') brackets++;
    else if (c === ')' || c === ']' || c === '}') brackets = Math.max(0, brackets - 1);
    i++;
  }
  // A backslash at the very end continues the line (inside or outside a string).
  const backslash = !commented && text.endsWith('\\');
  // A single-quoted string cannot span lines unless escaped: recover from malformed input.
  if ((quote === '"' || quote === "'") && !backslash) quote = '';
  return { quote, brackets, backslash };
}

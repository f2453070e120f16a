/**
 * What a program's text alone settles about the line event next to a stop: the statement that
 * must run next (forward) or must have run just before (inverse), and the call a function's
 * first statement comes from. The frame grammar uses it to keep the model's line on the only
 * line possible there; the model still writes the event where several are possible (a call, an
 * exception) and every value.
 *
 * Each answer holds only where nothing else can come between: a statement on one line that is
 * no block header (`if`, `for`, `try`, `def`, one-line forms included), falls through (no
 * `return`, `raise`, `break`, `continue`) and opens no frame of its own on its line
 * (comprehensions, generator expressions and lambdas run in frames whose line events read the
 * same; `yield` suspends), next to a statement at the same indentation with no other line
 * between. Anything else — a loop's last line, a line after a block, a text two statements
 * share — gets no answer.
 */
import type { SourceLine } from '../debugger/source';
import type { ProgramSource } from './session_source';

const HEADER = /:\s*(#.*)?$/;
const COMPOUND = /^\s*(if|elif|else|for|while|with|try|except|finally|def|class|async|match|case)\b/;
const NO_FALL_THROUGH = /^\s*(return|raise|break|continue)\b/;
const OWN_FRAME_OR_LOOP = /\b(for|while|lambda|yield)\b/;

const indentOf = (text: string) => text.length - text.trimStart().length;
const isCode = (text: string) => text.trim() !== '' && !text.trim().startsWith('#');

export class ProgramFlow {
  private readonly starts: Set<number>;

  constructor(private readonly source: ProgramSource) {
    this.starts = new Set(source.statements.map((s) => s.line));
  }

  /**
   * The `def` line whose call comes just before a stop at `src`, the first statement of a
   * function body: a call runs it once and nothing else reaches it. Not for a decorated
   * function (the call's SRC is the decorator line).
   */
  callBefore(src: string): string | undefined {
    const at = this.only(src);
    if (!at || OWN_FRAME_OR_LOOP.test(src)) return undefined;
    const fn = this.source.functionAt(at.line);
    if (!fn || fn.def >= at.line || /^\s*@/.test(this.source.lines[fn.def - 2] ?? '')) return undefined;
    if (this.source.statements.find((s) => s.line > fn.def)?.line !== at.line) return undefined;
    return this.oneLine(at.line) ? this.source.lines[fn.def - 1] : undefined;
  }

  /** The statement whose line event follows a line event at `src`, where only one can. */
  lineAfter(src: string): string | undefined {
    const at = this.only(src);
    if (!at || !this.fallsThrough(src)) return undefined;
    const next = this.codeLineAfter(at.line);
    return next !== undefined && this.sameBlock(at.line, next) && this.oneLine(next) ? this.source.lines[next - 1] : undefined;
  }

  /** The statement whose line event came just before a line event at `src`, where only one can. */
  lineBefore(src: string): string | undefined {
    const at = this.only(src);
    if (!at || OWN_FRAME_OR_LOOP.test(src) || !this.oneLine(at.line)) return undefined;
    const before = this.codeLineBefore(at.line);
    if (before === undefined || !this.sameBlock(before, at.line)) return undefined;
    const text = this.source.lines[before - 1];
    // A comprehension or lambda on that line is a callee of it: the stop before is still that line's.
    return !COMPOUND.test(text) && this.fallsThrough(text.replace(/\b(for|lambda)\b/g, '')) ? text : undefined;
  }

  /** The one statement that reads `src`. */
  private only(src: string): SourceLine | undefined {
    const at = this.source.statements.filter((s) => s.src === src);
    return at.length === 1 ? at[0] : undefined;
  }

  /**
   * The statement starting at `line` ends on it. 3.11 stops on the other lines of a statement
   * over several (and back on its first), so only one-line statements have one stop each.
   */
  private oneLine(line: number): boolean {
    const fn = this.source.functionAt(line);
    const next = this.codeLineAfter(line);
    return next === undefined || (fn !== undefined && next > fn.end) || this.starts.has(next);
  }

  /** A one-line simple statement that goes on to the next line and opens no frame. */
  private fallsThrough(text: string): boolean {
    return !HEADER.test(text) && !COMPOUND.test(text) && !NO_FALL_THROUGH.test(text) && !OWN_FRAME_OR_LOOP.test(text);
  }

  /** Two statement lines, one right after the other, of the same block of the same function body. */
  private sameBlock(first: number, second: number): boolean {
    const fn = this.source.functionAt(first);
    if (!fn || fn.def >= first || second > fn.end || this.source.functionAt(second) !== fn) return false;
    if (!this.starts.has(first) || !this.starts.has(second)) return false;
    return indentOf(this.source.lines[first - 1]) === indentOf(this.source.lines[second - 1]);
  }

  private codeLineAfter(line: number): number | undefined {
    for (let n = line + 1; n <= this.source.lines.length; n++) if (isCode(this.source.lines[n - 1])) return n;
    return undefined;
  }

  private codeLineBefore(line: number): number | undefined {
    for (let n = line - 1; n >= 1; n--) if (isCode(this.source.lines[n - 1])) return n;
    return undefined;
  }
}

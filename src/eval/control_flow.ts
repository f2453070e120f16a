/**
 * The control-flow graph of one function body as Python 3.11's line events walk it, read from the
 * program's text: for each statement line, the lines whose line event can come next in the same
 * frame when nothing raises, and whether the frame can return right after it. Program-flow
 * decoding (program_flow.ts) keeps the model's answer to a step inside these sets.
 *
 * 3.11 traces every statement line once per execution, a loop header once per iteration and once
 * more when the loop ends, `elif` and `except` headers when reached, and neither `else:` nor
 * `finally:` (no code of their own); docstrings and other bare strings run no code either. Where
 * the text holds something whose events this reading does not follow exactly — a statement over
 * several lines (3.11 stops on its other lines), `with` and `finally` (their exits run code at
 * other lines), `yield`, `match`, `global`, a class or decorator inside the body, a compound
 * statement written on one line — the function gets no graph at all.
 */
import type { ProgramSource } from './session_source';

type Kind =
  | 'if' | 'elif' | 'else' | 'for' | 'while' | 'try' | 'except'
  | 'def' | 'return' | 'raise' | 'break' | 'continue' | 'simple' | 'unsupported';

interface Statement {
  line: number;
  indent: number;
  kind: Kind;
  /** `while True:`: the header's test never fails. */
  endless?: boolean;
  parent?: Statement;
  children: Statement[];
}

/** Where the frame returns right after a line: a `return`, or the end of the body. */
export const RETURNS = 0;

export interface FunctionFlow {
  /** The `def` line. */
  def: number;
  /** The first line event of a call. */
  entry: number;
  /** Statement line → the lines whose line event can follow it (RETURNS: the frame can return there). */
  successors: ReadonlyMap<number, ReadonlySet<number>>;
}

const CLAUSES: ReadonlySet<Kind> = new Set(['elif', 'else', 'except']);
const HEADS: ReadonlySet<Kind> = new Set(['if', 'elif', 'else', 'for', 'while', 'try', 'except']);
const DOCSTRING = /^[rRbBuU]{0,2}('''|""")/;
const COMPOUND = new Map<string, Kind>(['if', 'elif', 'else', 'for', 'while', 'try', 'except', 'def'].map((k) => [k, k as Kind]));

function kindOf(body: string): { kind: Kind; endless?: boolean } {
  const word = /^[A-Za-z_]+/.exec(body)?.[0] ?? '';
  const header = /:\s*(#.*)?$/.test(body);
  const compound = COMPOUND.get(word);
  if (compound) {
    // A compound statement with its body on the same line runs both on one line event.
    if (!header) return { kind: 'unsupported' };
    return { kind: compound, endless: word === 'while' && /^while\s+(True|1)\s*:/.test(body) };
  }
  if (['with', 'finally', 'class', 'async', 'match', 'case', 'global', 'nonlocal'].includes(word) || body.startsWith('@')) return { kind: 'unsupported' };
  if (/\byield\b/.test(body)) return { kind: 'unsupported' };
  if (word === 'return' || word === 'raise' || word === 'break' || word === 'continue') return { kind: word };
  return { kind: 'simple' };
}

/** The function's graph, or undefined where its text holds what the graph does not follow. */
export function functionFlow(source: ProgramSource, def: number, end: number): FunctionFlow | undefined {
  const starts = new Set(source.statements.map((s) => s.line));
  const defIndent = indentOf(source.lines[def - 1]);
  const root: Statement = { line: def, indent: defIndent, kind: 'def', children: [] };
  const stack: Statement[] = [root];
  let nestedIndent = Infinity; // inside a nested def's body: its lines are another function's
  for (let n = def + 1; n <= end; n++) {
    const text = source.lines[n - 1];
    const body = text.trim();
    if (body === '' || body.startsWith('#')) continue;
    const indent = indentOf(text);
    if (indent > nestedIndent) continue;
    nestedIndent = Infinity;
    const quote = DOCSTRING.exec(body)?.[1];
    if (quote !== undefined) {
      const closed = body.indexOf(quote, body.indexOf(quote) + 3);
      if (closed >= 0 && closed + 3 < body.length) return undefined; // a string with more after it on the line
      // A bare string runs no code: go on after the line that closes it.
      if (closed < 0) {
        while (n < end && !source.lines[n].includes(quote)) n++;
        n++;
      }
      continue;
    }
    // Any other line that starts no statement continues one over several lines.
    if (!starts.has(n) && !/^(else|finally)\s*:/.test(body)) return undefined;
    const { kind, endless } = kindOf(body);
    if (kind === 'unsupported') return undefined;
    while (stack[stack.length - 1].indent >= indent) stack.pop();
    const parent = stack[stack.length - 1];
    const statement: Statement = { line: n, indent, kind, endless, parent, children: [] };
    parent.children.push(statement);
    if (kind === 'def') nestedIndent = indent;
    else if (HEADS.has(kind)) stack.push(statement);
  }
  if (root.children.length === 0) return undefined;
  const graph = new Graph();
  const successors = new Map<number, ReadonlySet<number>>();
  const walk = (s: Statement) => {
    if (s.kind !== 'else') successors.set(s.line, graph.successors(s));
    s.children.forEach(walk);
  };
  root.children.forEach(walk);
  if (graph.broken) return undefined;
  return { def, entry: graph.entry(root.children[0]), successors };
}

class Graph {
  /** Set where a block has no statement to go to (an `if` body that is only a string). */
  broken = false;

  successors(s: Statement): Set<number> {
    switch (s.kind) {
      case 'return':
        return new Set([RETURNS]);
      case 'raise':
        return new Set();
      case 'break': {
        const loop = this.loopOf(s);
        return loop ? new Set([this.after(loop)]) : this.fail();
      }
      case 'continue': {
        const loop = this.loopOf(s);
        return loop ? new Set([loop.line]) : this.fail();
      }
      case 'if':
      case 'elif':
        return new Set([this.first(s), this.alternative(s)]);
      case 'for':
      case 'while':
        return new Set(s.endless ? [this.first(s)] : [this.first(s), this.exhausted(s)]);
      case 'try':
        return new Set([this.first(s)]);
      case 'except': {
        // An exception no clause matches leaves by an exception event, not a line.
        const next = this.clauseAfter(s);
        return new Set(next?.kind === 'except' ? [this.first(s), next.line] : [this.first(s)]);
      }
      default:
        return new Set([this.after(s)]);
    }
  }

  /** The first line event of a statement: an `else:` runs its body's first statement. */
  entry(s: Statement): number {
    return s.kind === 'else' ? this.first(s) : s.line;
  }

  private first(s: Statement): number {
    return s.children.length > 0 ? this.entry(s.children[0]) : this.failLine();
  }

  /** Where control goes when statement `s` (with its clauses) completes normally. */
  private after(s: Statement): number {
    const siblings = s.parent!.children;
    const next = siblings.slice(siblings.indexOf(s) + 1).find((t) => !CLAUSES.has(t.kind));
    return next ? this.entry(next) : this.endOfBlock(s.parent!);
  }

  /** Where control goes when the block under header `h` runs to its end. */
  private endOfBlock(h: Statement): number {
    if (h.parent === undefined) return RETURNS;
    if (h.kind === 'for' || h.kind === 'while') return h.line;
    const owner = this.ownerOf(h);
    if (h.kind === 'try') {
      const orElse = this.clausesOf(owner).find((c) => c.kind === 'else');
      return orElse ? this.entry(orElse) : this.after(owner);
    }
    return this.after(owner);
  }

  /** An `if`/`elif` header's target when its test fails. */
  private alternative(s: Statement): number {
    const next = this.clauseAfter(s);
    return next ? this.entry(next) : this.after(this.ownerOf(s));
  }

  /** A loop header's target when the loop ends: its `else:` or what follows. */
  private exhausted(s: Statement): number {
    const orElse = this.clausesOf(s).find((c) => c.kind === 'else');
    return orElse ? this.entry(orElse) : this.after(s);
  }

  /** The `if`/`for`/`while`/`try` a clause belongs to (a head is its own). */
  private ownerOf(s: Statement): Statement {
    if (!CLAUSES.has(s.kind)) return s;
    const siblings = s.parent!.children;
    for (let i = siblings.indexOf(s) - 1; i >= 0; i--) if (!CLAUSES.has(siblings[i].kind)) return siblings[i];
    return this.failStatement(s);
  }

  /** The clauses that follow a compound statement's head, in order. */
  private clausesOf(head: Statement): Statement[] {
    const siblings = head.parent!.children;
    const out: Statement[] = [];
    for (const t of siblings.slice(siblings.indexOf(head) + 1)) {
      if (!CLAUSES.has(t.kind)) break;
      out.push(t);
    }
    return out;
  }

  private clauseAfter(s: Statement): Statement | undefined {
    const siblings = s.parent!.children;
    const next = siblings[siblings.indexOf(s) + 1];
    return next && CLAUSES.has(next.kind) ? next : undefined;
  }

  private loopOf(s: Statement): Statement | undefined {
    for (let p = s.parent; p && p.parent; p = p.parent) if (p.kind === 'for' || p.kind === 'while') return this.ownerOf(p);
    return undefined;
  }

  private fail(): Set<number> {
    this.broken = true;
    return new Set();
  }

  private failLine(): number {
    this.broken = true;
    return RETURNS;
  }

  private failStatement(s: Statement): Statement {
    this.broken = true;
    return s;
  }
}

function indentOf(text: string): number {
  return text.length - text.trimStart().length;
}

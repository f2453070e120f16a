/**
 * What a line of a program may run, read from the program's text: the functions (and class
 * methods) it names and, through their bodies, everything they name in turn. A walked breakpoint
 * (jump_walk.ts) steps over a line only when none of the functions holding the target line can
 * run inside it, so the rule must never say "cannot" when the program could: any name of a
 * program function counts as a possible call (passed as a key, stored, called by attribute),
 * naming a class counts as running all its methods, and the cases whose code runs away from the
 * line that names it (generator bodies, lambdas, comprehensions and generator expressions,
 * dunder methods that operators call) are never stepped over.
 *
 * It also tells whether a line opens traced frames each time it runs (callsOn), for program-flow
 * decoding: a call of one of the program's functions, or a comprehension (3.11 runs each in a
 * frame of its own). A step into a line that always calls lands on the call, and stepping back
 * over it lands on its `inv_line_call` copy (spec ndl.md §4); a line that cannot call has
 * neither. 'always' only where nothing on the line can skip the call: no `if`, `and`, `or` or
 * `lambda` outside a comprehension's own clauses, not a `for` header (which calls on its first
 * pass only), and a generator expression only as the argument of a builtin that iterates it.
 * 'none' only where the line names no program function and calls no function value: nothing
 * called by a bare name other than a builtin's (a parameter may hold the caller's lambda), no
 * `key=`, `map` or `filter`. A program that defines a class gets 'maybe' throughout: its methods
 * run behind operators, attributes and builtins.
 */

export type LineCalls = 'none' | 'maybe' | 'always';

interface Callable {
  name: string;
  kind: 'def' | 'class';
  /** Identifiers its body mentions (a class: the names of its methods). */
  names: Set<string>;
  /** Exact texts of the lines of its body (without nested definitions' lines for a def). */
  lines: Set<string>;
  generator: boolean;
}

/** Builtins that iterate a generator expression given as their argument, so run its frame. */
const CONSUMERS = new Set(['sum', 'any', 'all', 'max', 'min', 'list', 'set', 'tuple', 'sorted', 'join', 'dict', 'frozenset']);
const CONDITIONAL = /\b(if|and|or|lambda)\b/;
/** Builtins that call no code of the program unless given a function (`map`, `key=`: CALLS_VALUES). */
const PLAIN_BUILTINS = new Set(
  ('abs all any ascii bin bool bytearray bytes callable chr complex dict dir divmod enumerate float format frozenset ' +
    'getattr hasattr hash hex id int isinstance issubclass len list max min oct ord pow range repr reversed round set ' +
    'slice sorted str sum tuple type zip').split(' '),
);
/** Calls that run a function value they are given. */
const CALLS_VALUES = /\b(map|filter|eval|exec|iter|next|reduce)\s*\(|\bkey\s*=/;

const DEFINITION = /^(\s*)(def|class)\s+([A-Za-z_]\w*)/;
/** Keywords that may stand before a parenthesis (`if (`, `not (`) without calling anything. */
const KEYWORDS = new Set('and as assert del elif else for if in is lambda not or return while with'.split(' '));
const IDENTIFIER = /[A-Za-z_]\w*/g;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

export class ProgramCalls {
  private readonly byName = new Map<string, Callable[]>();
  /** Each line text → the innermost definitions whose bodies hold a line with that text. */
  private readonly holders = new Map<string, Callable[]>();
  /** Some function has a decorator: its calls run the decorator's wrapper first. */
  private readonly decorated: boolean;

  constructor(code: string) {
    const lines = code.split('\n');
    this.decorated = lines.some((l) => /^\s*@/.test(l));
    const open: Array<{ callable: Callable; indent: number }> = [];
    for (const line of lines) {
      if (line.trim() === '') continue;
      const indent = indentOf(line);
      while (open.length > 0 && indent <= open[open.length - 1].indent) open.pop();
      const inner = open[open.length - 1]?.callable;
      if (inner) {
        inner.lines.add(line);
        if (!this.holders.has(line)) this.holders.set(line, []);
        (this.holders.get(line) as Callable[]).push(inner);
        for (const { callable } of open) {
          for (const id of line.match(IDENTIFIER) ?? []) callable.names.add(id);
          if (/\byield\b/.test(line) && callable === inner) callable.generator = true;
        }
      }
      const def = DEFINITION.exec(line);
      if (def) {
        const callable: Callable = { name: def[3], kind: def[2] as 'def' | 'class', names: new Set(), lines: new Set(), generator: false };
        if (!this.byName.has(callable.name)) this.byName.set(callable.name, []);
        (this.byName.get(callable.name) as Callable[]).push(callable);
        open.push({ callable, indent });
      }
    }
  }

  /** What the statement `text` calls each time it runs. */
  callsOn(text: string): LineCalls {
    const body = code(text).trim();
    if (/^def\s/.test(body)) return 'none';
    if (this.anyClass() || /\b(lambda|yield|await)\b/.test(body)) return 'maybe';
    const mentions = [...this.mentions(body)];
    const comprehensions = comprehensionsOf(body);
    if (mentions.length === 0 && comprehensions.length === 0) return this.callsValues(body) ? 'maybe' : 'none';
    if (/^for\b/.test(body) || mentions.some((m) => !m.called || this.isGenerator(m.name))) return 'maybe';
    // What runs each time: the line without its comprehensions' own clauses and its header keyword.
    let outside = body.replace(/^(if|elif|while|return)\b/, '');
    for (const c of comprehensions) outside = outside.replace(c.text, '_');
    if (CONDITIONAL.test(outside)) return 'maybe';
    return comprehensions.every((c) => c.runs) ? 'always' : 'maybe';
  }

  /**
   * The lines at which a frame that the statement `text` opens itself can return: every line of
   * each program function it names (called, or handed to a builtin), and its own line where it
   * holds a comprehension, generator expression or lambda (their frames read the line). Stepping
   * back into a line's calls lands on its last call's return (spec ndl.md §4), which is one of
   * these. Undefined where a frame the line does not name can open: a class's methods, a
   * generator's body (resumed by whatever iterates it), a decorator's wrapper, a function value
   * called through a variable, a subscript or a call's result.
   */
  calleeLines(text: string): string[] | undefined {
    const body = code(text).trim();
    if (this.anyClass() || this.anyGenerator() || this.decorated || /\b(yield|await)\b/.test(body)) return undefined;
    if (this.callsUnnamed(body)) return undefined;
    const lines = new Set<string>();
    for (const { name } of this.mentions(body)) {
      for (const c of this.byName.get(name) ?? []) if (c.kind === 'def') for (const l of c.lines) lines.add(l);
    }
    if (comprehensionsOf(body).length > 0 || /\blambda\b/.test(body)) lines.add(text);
    return [...lines];
  }

  /**
   * Whether stepping over `line` (the text of the line a frame stops at) can never miss a line
   * event at `target`: no function holding a line with the target's text can run inside it.
   */
  canStepOver(line: string, target: string): boolean {
    if (line === target || runsAway(target)) return false;
    const holders = this.holders.get(target);
    if (!holders || holders.length === 0) return false;
    if (holders.some((h) => h.generator || h.name.startsWith('__'))) return false;
    const reach = this.reachableFrom(line);
    return holders.every((h) => !reach.has(h));
  }

  /** The callables `line` may run, directly or through what they name. */
  private reachableFrom(line: string): Set<Callable> {
    const seen = new Set<Callable>();
    const queue = [...(line.match(IDENTIFIER) ?? [])];
    while (queue.length > 0) {
      const name = queue.pop() as string;
      for (const c of this.byName.get(name) ?? []) {
        if (seen.has(c)) continue;
        seen.add(c);
        queue.push(...c.names);
      }
    }
    return seen;
  }

  /**
   * Whether a line may call a function value: a parameter or variable called by name (a function
   * the caller passed in), or a builtin handed one.
   */
  private callsValues(text: string): boolean {
    if (CALLS_VALUES.test(text)) return true;
    return calledNames(text).some((name) => !PLAIN_BUILTINS.has(name) && !this.isFunction(name));
  }

  /**
   * Whether a line may call a function it does not name: a variable called by name, a subscript
   * or a call's result called, or a builtin handed a function value that is not the program's, a
   * lambda or a builtin.
   */
  private callsUnnamed(text: string): boolean {
    if (/[)\]]\s*\(/.test(text) || /\b(eval|exec|iter|next|reduce)\s*\(/.test(text)) return true;
    const known = (name: string) => PLAIN_BUILTINS.has(name) || this.isFunction(name);
    if (calledNames(text).some((name) => !known(name) && !KEYWORDS.has(name))) return true;
    const handed = [...text.matchAll(/\b(?:map|filter)\s*\(\s*([\w.]+)|\bkey\s*=\s*([\w.]+)/g)].map((m) => m[1] ?? m[2]);
    return handed.some((v) => v !== 'lambda' && !v.includes('.') && !known(v));
  }

  /** The program's function names on a line, each called directly (`f(`) or not. */
  private *mentions(text: string): Generator<{ name: string; called: boolean }> {
    for (const m of text.matchAll(/(?<![\w.])([A-Za-z_]\w*)(\s*\()?/g)) {
      if (this.isFunction(m[1])) yield { name: m[1], called: m[2] !== undefined };
    }
  }

  private isFunction(name: string): boolean {
    return (this.byName.get(name) ?? []).some((c) => c.kind === 'def');
  }

  private isGenerator(name: string): boolean {
    return (this.byName.get(name) ?? []).some((c) => c.generator);
  }

  private anyGenerator(): boolean {
    return [...this.byName.values()].some((cs) => cs.some((c) => c.generator));
  }

  private anyClass(): boolean {
    return [...this.byName.values()].some((cs) => cs.some((c) => c.kind === 'class'));
  }
}

/** The bare names a line calls (`f(`, not `x.f(`); keywords before a parenthesis read the same. */
function calledNames(text: string): string[] {
  return [...text.matchAll(/(?<![\w.])([A-Za-z_]\w*)\s*\(/g)].map((m) => m[1]);
}

/**
 * A target whose line events can happen while another line runs: a lambda's body, a
 * comprehension's or generator expression's frame (which has its line's text), or a yield.
 */
function runsAway(target: string): boolean {
  const text = target.trim();
  const fors = text.match(/\bfor\b/g)?.length ?? 0;
  return /\blambda\b|\byield\b/.test(text) || fors > (text.startsWith('for ') ? 1 : 0);
}

/** The line with string literals blanked (f-strings kept: their fields are code), comment cut. */
function code(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '#') break;
    if (c !== '"' && c !== "'") {
      out += c;
      continue;
    }
    // The string's prefix (r, b, f, ...) is no name.
    const prefix = /(?<!\w)[rRbBuUfF]{1,2}$/.exec(out)?.[0] ?? '';
    const formatted = /[fF]/.test(prefix);
    out = out.slice(0, out.length - prefix.length);
    const quote = text.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
    let j = i + quote.length;
    while (j < text.length && !text.startsWith(quote, j)) j += text[j] === '\\' ? 2 : 1;
    out += formatted ? text.slice(i, j + quote.length) : `${quote}${quote}`;
    i = j + quote.length - 1;
  }
  return out;
}

/**
 * Each comprehension on a line (a bracket that holds a `for`), with whether its frame surely runs:
 * list, set and dict comprehensions always; a generator expression when a consumer iterates it.
 */
function comprehensionsOf(text: string): Array<{ text: string; runs: boolean }> {
  const out: Array<{ text: string; runs: boolean }> = [];
  const open: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ('([{'.includes(c)) open.push(i);
    else if (')]}'.includes(c) && open.length > 0) {
      const start = open.pop()!;
      const inner = text.slice(start, i + 1);
      // A bracket whose only `for` is a comprehension's inside it (closed before it) is none itself.
      if (!/\bfor\b/.test(out.reduce((rest, o) => rest.replace(o.text, '_'), inner))) continue;
      const caller = /([A-Za-z_]\w*)\s*$/.exec(text.slice(0, start))?.[1];
      out.push({ text: inner, runs: text[start] !== '(' || (caller !== undefined && CONSUMERS.has(caller)) });
    }
  }
  // Keep the outermost: an inner bracket's comprehension runs inside the outer one's frame.
  return out.filter((o) => !out.some((p) => p !== o && p.text.includes(o.text)));
}

/**
 * What a line of a program may run, read from the program's text: the functions (and class
 * methods) it names and, through their bodies, everything they name in turn. A walked breakpoint
 * (jump_walk.ts) steps over a line only when none of the functions holding the target line can
 * run inside it, so the rule must never say "cannot" when the program could: any name of a
 * program function counts as a possible call (passed as a key, stored, called by attribute),
 * naming a class counts as running all its methods, and the cases whose code runs away from the
 * line that names it (generator bodies, lambdas, comprehensions and generator expressions,
 * dunder methods that operators call) are never stepped over.
 */

interface Callable {
  name: string;
  /** Identifiers its body mentions (a class: the names of its methods). */
  names: Set<string>;
  /** Exact texts of the lines of its body (without nested definitions' lines for a def). */
  lines: Set<string>;
  generator: boolean;
}

const DEFINITION = /^(\s*)(def|class)\s+([A-Za-z_]\w*)/;
const IDENTIFIER = /[A-Za-z_]\w*/g;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

export class ProgramCalls {
  private readonly byName = new Map<string, Callable[]>();
  /** Each line text → the innermost definitions whose bodies hold a line with that text. */
  private readonly holders = new Map<string, Callable[]>();

  constructor(code: string) {
    const lines = code.split('\n');
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
        const callable: Callable = { name: def[3], names: new Set(), lines: new Set(), generator: false };
        if (!this.byName.has(callable.name)) this.byName.set(callable.name, []);
        (this.byName.get(callable.name) as Callable[]).push(callable);
        open.push({ callable, indent });
      }
    }
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

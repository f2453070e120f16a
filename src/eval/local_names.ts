/**
 * Which names a frame's LOCALS may hold, read from the program's text. A function's frame only
 * ever holds names its own text spells (parameters, assigned names, loop and comprehension
 * targets, the free variables it reads), plus the `.0` argument of a comprehension's frame and
 * the delta's elision marker. A call frame of a function that sits in no other function and
 * never yields holds exactly its parameters, in the code object's order (Python 3.11: no free
 * variables, and a local is unbound until assigned). A step's delta holds only what the line
 * that ran could change (forStep). The frame grammar keeps the model's keys inside these: the
 * answers never show a variable the frame cannot have, and a call frame names every argument
 * (docs/eval.md, "Decoding: local names"; it moved no full-frame figure on validation).
 *
 * No rule where the text cannot settle it: a line outside every function (a module or class body
 * holds `__name__`, `__qualname__` and the like), any program with a `class` (its body runs inside
 * the function that holds it), and a SRC that is no line of the program.
 */
import type { KeyRule } from '../ndl/json_prefix';
import type { NdlEvent } from '../ndl/tokens';
import { parameterNames, type ProgramSource } from './session_source';

/** Names Python writes into frames that no program text spells: a comprehension's iterator and the delta's marker. */
const UNWRITTEN = ['.0', '..'];

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/g;

/** Python's hard keywords: no variable is ever named one. */
const KEYWORDS = new Set(
  'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(' '),
);

/** The identifiers a text spells, keywords left out. */
function spelledIn(text: string): string[] {
  return (text.match(IDENTIFIER) ?? []).filter((w) => !KEYWORDS.has(w));
}

/** Reprs of values no line can change in place: numbers, strings, bytes, booleans, None. */
const IMMUTABLE = /^(?:[-+]?\d|-?inf$|nan$|'|"|b'|b"|True$|False$|None$)/;

/** Reprs at least this long may have been cut in the middle (the tracer's cap, spec §3). */
const MAYBE_CUT = 250;

/** Whether two reprs of mutable values may show one object: one holds the other's text, or either may have been cut. */
function mayShare(a: string, b: string): boolean {
  return a.includes(b) || b.includes(a) || a.length >= MAYBE_CUT || b.length >= MAYBE_CUT;
}

export class LocalNames {
  private readonly hasClass: boolean;
  private readonly byText = new Map<string, KeyRule | undefined>();

  constructor(private readonly source: ProgramSource) {
    this.hasClass = /^\s*class\b/m.test(source.context);
  }

  /**
   * The keys a frame with `event` at any of the lines reading one of `srcs` may hold; undefined
   * when the text does not settle it for one of them.
   */
  forFrame(event: NdlEvent, srcs: readonly string[]): KeyRule | undefined {
    const rules = srcs.map((src) => this.forSrc(event, src));
    if (rules.length === 1 || rules.some((r) => r === undefined)) return rules[0];
    return { names: new Set(rules.flatMap((r) => [...r!.names])) };
  }

  /**
   * The keys of a step's delta (spec §3: `..`, then the variables that changed) where line `ran`
   * ran without a traced call: only a variable the line spells can have been bound or changed,
   * or one whose object such a variable may share (a list two names hold, a row held inside a
   * table), which shows the change too. `locals`: the frame's variables on the stop's side of
   * the step, known exactly.
   */
  forStep(ran: string, locals: Readonly<Record<string, string>>): KeyRule {
    const spelled = new Set(spelledIn(ran));
    const mutable = Object.entries(locals).filter(([, repr]) => !IMMUTABLE.test(repr));
    const touched = mutable.filter(([name]) => spelled.has(name)).map(([, repr]) => repr);
    const names = new Set(['..', ...spelled]);
    for (const [name, repr] of mutable) if (touched.some((t) => mayShare(repr, t))) names.add(name);
    return { names };
  }

  private forSrc(event: NdlEvent, src: string): KeyRule | undefined {
    const isCall = event === 'call' || event === 'inv_call';
    const key = `${isCall}\n${src}`;
    if (!this.byText.has(key)) this.byText.set(key, this.rule(isCall, src));
    return this.byText.get(key);
  }

  private rule(isCall: boolean, src: string): KeyRule | undefined {
    if (this.hasClass) return undefined;
    const lines = this.source.lines.map((text, i) => (text === src ? i + 1 : 0)).filter((n) => n > 0);
    const texts = lines.map((n) => this.source.functionText(n));
    if (lines.length === 0 || texts.some((t) => t === undefined)) return undefined;
    const names = new Set([...UNWRITTEN, ...texts.flatMap((t) => spelledIn(t!))]);
    const exact = isCall && lines.length === 1 ? this.callArguments(lines[0]) : undefined;
    return exact ? { names, exact } : { names };
  }

  /** The parameters a call frame at line `def` holds, where that is all it holds. */
  private callArguments(def: number): string[] | undefined {
    const fn = this.source.functionAt(def);
    if (!fn || fn.def !== def || this.source.isNested(def)) return undefined;
    // A generator's later call events (each resumption) hold every local, not only its arguments.
    if (/\byield\b/.test(this.source.functionText(def)!)) return undefined;
    return parameterNames(this.source.lines[def - 1]);
  }
}

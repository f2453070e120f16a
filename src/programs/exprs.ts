// One table of productions on purpose: split by type, it would scatter the totality rules below.
import { expr, PREC, pyStr, wrap, type Expr, type Ty } from './ir';
import type { Scope } from './scope';
import { cmp, elementInt, mentionsVar, nonEmptyChar, strKey } from './expr_snippets';
import { CHAR_CONSTS, DICT_KEYS, LOOP_NAMES, STR_CONSTS } from './values';

/**
 * Typed expression generation. Every production is total for its operand types (no empty
 * max(), no unguarded index, no division by a variable, no zero slice step, no split('')),
 * so a program is type-correct by construction; the filters catch what slips through.
 * Multiplication is always by a small constant and nothing squares a variable, so values stay
 * small even inside nested loops.
 */
type Production = (s: Scope, b: number) => Expr | null;

const A = PREC.atom;

const k = (s: Scope, lo: number, hi: number) => s.fn.rng.range(lo, hi);
const ch = (s: Scope) => pyStr(s.fn.rng.choice(CHAR_CONSTS));

function v(s: Scope, ty: Ty): Expr | null {
  const x = s.pick(ty);
  return x ? expr(x.name, ty, A) : null;
}

export function constant(s: Scope, ty: Ty): Expr {
  const rng = s.fn.rng;
  switch (ty) {
    case 'int':
      return expr(String(rng.range(-2, 10)), 'int', rng.bool() ? A : A);
    case 'str':
      return expr(pyStr(rng.choice(STR_CONSTS)), 'str', A);
    case 'bool':
      return expr(rng.bool() ? 'True' : 'False', 'bool', A);
    case 'list_int':
      return expr(rng.bool(0.6) ? '[]' : `[${Array.from({ length: rng.range(1, 3) }, () => rng.range(0, 9)).join(', ')}]`, ty, A);
    case 'list_str':
      return expr(rng.bool(0.7) ? '[]' : `[${pyStr(rng.choice(STR_CONSTS))}]`, ty, A);
    case 'dict':
      return expr(rng.bool(0.7) ? '{}' : `{${pyStr(rng.choice(DICT_KEYS))}: ${rng.range(0, 9)}}`, ty, A);
    case 'tuple':
      return expr(`(${rng.range(0, 5)}, ${rng.range(0, 5)})`, ty, A);
    case 'matrix':
      return expr('[[0, 1], [2, 3]]', ty, A);
    default:
      throw new Error(`no constant for ${ty}`);
  }
}

/** A fresh comprehension variable bound in a child scope (never visible outside it). */
function bind(s: Scope, pool: string[], ty: Ty): { scope: Scope; name: string } {
  const scope = s.child();
  const name = s.fn.fresh(pool);
  scope.add(name, ty);
  scope.freeze(name);
  return { scope, name };
}

const P: Record<string, Array<[number, Production]>> = {
  int: [
    [6, (s) => v(s, 'int')],
    [2, (s) => constant(s, 'int')],
    [2, (s, b) => expr(`len(${gen(s, s.fn.rng.choice(['list_int', 'list_str', 'str', 'dict'] as Ty[]), b - 1).code})`, 'int', A)],
    [1.5, (s, b) => expr(`sum(${gen(s, 'list_int', b - 1).code})`, 'int', A)],
    [1, (s, b) => expr(`max(${gen(s, 'list_int', b - 1).code}, default=0)`, 'int', A)],
    [1, (s) => {
      const l = v(s, 'list_int');
      return l ? expr(`${l.code}[-1] if ${l.code} else 0`, 'int', PREC.ifexp, 'ifexp', 'index') : null;
    }],
    [4, (s, b) => {
      const op = s.fn.rng.choice(['+', '-', '+', '-', '*', '%', '//']);
      const l = gen(s, 'int', b - 1);
      const r = op === '+' || op === '-' ? gen(s, 'int', b - 1) : expr(String(k(s, 2, 5)), 'int', A);
      const p = op === '+' || op === '-' ? PREC.add : PREC.mul;
      if (l.code === r.code) return null;
      return expr(`${wrap(l, p)} ${op} ${wrap(r, p + 1)}`, 'int', p);
    }],
    [1.5, (s, b) => {
      const m = s.fn.rng.choice(['count', 'find', 'rfind']);
      return expr(`${wrap(gen(s, 'str', b - 1), A)}.${m}(${ch(s)})`, 'int', A, 'str_method');
    }],
    [1, (s, b) => expr(`${wrap(gen(s, 'list_int', b - 1), A)}.count(${gen(s, 'int', 0).code})`, 'int', A, 'list_method')],
    [1.5, (s, b) => {
      const d = v(s, 'dict');
      return d ? expr(`${d.code}.get(${strKey(s, b)}, ${k(s, 0, 3)})`, 'int', A, 'dict_method') : null;
    }],
    [1, (s, b) => expr(`${s.fn.rng.choice(['abs', 'int'])}(${gen(s, 'int', b - 1).code})`, 'int', A)],
    [1, (s, b) => {
      const [l, r] = [gen(s, 'int', b - 1), gen(s, 'int', b - 1)];
      return l.code === r.code ? null : expr(`${s.fn.rng.choice(['min', 'max'])}(${l.code}, ${r.code})`, 'int', A);
    }],
    [2.5, (s) => {
      const pairs = s.indexPairs();
      if (!pairs.length) return null;
      const p = s.fn.rng.choice(pairs);
      const seq = s.all().find((x) => x.name === p.seq);
      return seq?.ty === 'list_int' ? expr(`${p.seq}[${p.index}]`, 'int', A, 'index') : null;
    }],
    [1, (s) => {
      const t = v(s, 'tuple');
      return t ? expr(`${t.code}[${k(s, 0, 1)}]`, 'int', A, 'index') : null;
    }],
    [0.7, (s) => {
      const b = v(s, 'bool');
      return b ? expr(`int(${b.code})`, 'int', A) : null;
    }],
    [1, (s, b) => {
      const src = gen(s, 'str', b - 1);
      const { name } = bind(s, LOOP_NAMES.str, 'str');
      const test = s.fn.rng.choice(['isdigit', 'isupper', 'isalpha', 'islower', 'isspace']);
      return expr(`sum(1 for ${name} in ${wrap(src, PREC.or)} if ${name}.${test}())`, 'int', A, 'genexp', 'str_method');
    }],
    [1, (s, b) => {
      const src = gen(s, 'list_int', b - 1);
      const { scope, name } = bind(s, LOOP_NAMES.int, 'int');
      return expr(`len([${name} for ${name} in ${wrap(src, PREC.or)} if ${cmp(scope, name)}])`, 'int', A, 'listcomp');
    }],
    [0.7, (s) => {
      const x = v(s, 'str');
      return x ? expr(`int(${x.code}) if ${x.code}.isdigit() else ${k(s, -1, 1)}`, 'int', PREC.ifexp, 'ifexp', 'str_method') : null;
    }],
  ],
  str: [
    [6, (s) => v(s, 'str')],
    [1.5, (s) => constant(s, 'str')],
    [3, (s, b) => {
      const m = s.fn.rng.choice(['upper', 'lower', 'strip', 'title', 'capitalize', 'swapcase', 'lstrip', 'rstrip']);
      return expr(`${wrap(gen(s, 'str', b - 1), A)}.${m}()`, 'str', A, 'str_method');
    }],
    [1.2, (s, b) => expr(`${wrap(gen(s, 'str', b - 1), A)}.replace(${nonEmptyChar(s)}, ${ch(s)})`, 'str', A, 'str_method')],
    [3, (s, b) => expr(`${wrap(gen(s, 'str', b - 1), A)}[${slice(s, b)}]`, 'str', A, 'slice')],
    [2, (s, b) => expr(`${pyStr(s.fn.rng.choice(['', ' ', '-', ',', '', '_']))}.join(${gen(s, 'list_str', b - 1).code})`, 'str', A, 'str_method')],
    [2, (s, b) => expr(`${wrap(gen(s, 'str', b - 1), PREC.add)} + ${wrap(gen(s, 'str', b - 1), PREC.add + 1)}`, 'str', PREC.add)],
    [1, (s, b) => expr(`str(${gen(s, 'int', b - 1).code})`, 'str', A)],
    [0.7, (s, b) => expr(`${ch(s)} * (${gen(s, 'int', b - 1).code} % ${k(s, 2, 4)})`, 'str', PREC.mul)],
    [1, (s) => {
      const x = v(s, 'str');
      return x ? expr(`${x.code}[${s.fn.rng.choice(['0', '-1'])}] if ${x.code} else ${ch(s)}`, 'str', PREC.ifexp, 'ifexp', 'index') : null;
    }],
    [1, (s) => {
      const a = s.all().filter((x) => ['int', 'str', 'bool'].includes(x.ty));
      if (a.length < 1) return null;
      const x = s.fn.rng.choice(a).name;
      const y = s.fn.rng.choice(a).name;
      return expr(`f'{${x}}${s.fn.rng.choice([':', '-', '/', ' ', '|'])}{${y}}'`, 'str', A, 'fstring');
    }],
    [0.8, (s, b) => {
      const m = s.fn.rng.choice(['center', 'ljust', 'rjust']);
      return expr(`${wrap(gen(s, 'str', b - 1), A)}.${m}(${k(s, 3, 12)}, ${nonEmptyChar(s)})`, 'str', A, 'str_method');
    }],
    [0.8, (s, b) => expr(`${wrap(gen(s, 'str', b - 1), A)}.zfill(${k(s, 2, 8)})`, 'str', A, 'str_method')],
    [1, (s, b) => expr(`${wrap(gen(s, 'str', b - 1), PREC.or)} if ${wrap(gen(s, 'bool', b - 1), PREC.or)} else ${wrap(gen(s, 'str', b - 1), PREC.ifexp)}`, 'str', PREC.ifexp, 'ifexp')],
  ],
  bool: [
    [2, (s) => v(s, 'bool')],
    [4, (s, b) => {
      const op = s.fn.rng.choice(['<', '>', '<=', '>=', '==', '!=']);
      const [l, r] = [gen(s, 'int', b - 1), gen(s, 'int', b - 1)];
      if (l.code === r.code) return null;
      return expr(`${wrap(l, PREC.add)} ${op} ${wrap(r, PREC.add)}`, 'bool', PREC.cmp);
    }],
    [2, (s, b) => {
      const ty = s.fn.rng.choice(['list_int', 'str', 'dict', 'list_str'] as Ty[]);
      const container = gen(s, ty, b - 1);
      const item = ty === 'list_int' ? gen(s, 'int', 0) : ty === 'dict' ? expr(strKey(s, b), 'str', A) : ty === 'str' ? expr(ch(s), 'str', A) : gen(s, 'str', 0);
      return expr(`${wrap(item, PREC.add)} ${s.fn.rng.bool(0.8) ? 'in' : 'not in'} ${wrap(container, PREC.add)}`, 'bool', PREC.cmp);
    }],
    [2, (s, b) => {
      const m = s.fn.rng.choice(['isdigit()', 'isalpha()', 'islower()', 'isupper()', `startswith(${ch(s)})`, `endswith(${ch(s)})`, 'isspace()']);
      return expr(`${wrap(gen(s, 'str', b - 1), A)}.${m}`, 'bool', A, 'str_method');
    }],
    [1, (s, b) => expr(`not ${wrap(gen(s, 'bool', b - 1), PREC.not)}`, 'bool', PREC.not, 'bool_op')],
    [1.2, (s, b) => {
      const op = s.fn.rng.choice(['and', 'or']);
      const p = op === 'and' ? PREC.and : PREC.or;
      return expr(`${wrap(gen(s, 'bool', b - 1), p)} ${op} ${wrap(gen(s, 'bool', b - 1), p + 1)}`, 'bool', p, 'bool_op');
    }],
    [1.5, (s, b) => expr(`len(${gen(s, s.fn.rng.choice(['list_int', 'list_str', 'str', 'dict'] as Ty[]), b - 1).code}) ${s.fn.rng.choice(['>', '<', '==', '>='])} ${k(s, 0, 5)}`, 'bool', PREC.cmp)],
    [1.5, (s, b) => expr(`${wrap(gen(s, 'int', b - 1), PREC.mul)} % ${k(s, 2, 4)} == ${k(s, 0, 1)}`, 'bool', PREC.cmp)],
    [0.8, (s, b) => {
      const src = gen(s, 'list_int', b - 1);
      const { scope, name } = bind(s, LOOP_NAMES.int, 'int');
      return expr(`${s.fn.rng.choice(['all', 'any'])}(${cmp(scope, name)} for ${name} in ${wrap(src, PREC.or)})`, 'bool', A, 'genexp');
    }],
    [0.6, (s, b) => expr(`${wrap(gen(s, 'str', b - 1), PREC.add)} == ${wrap(gen(s, 'str', b - 1), PREC.add)}`, 'bool', PREC.cmp)],
  ],
  list_int: [
    [6, (s) => v(s, 'list_int')],
    [0.7, (s) => constant(s, 'list_int')],
    [3, (s, b) => {
      const src = gen(s, 'list_int', b - 1);
      const { scope, name } = bind(s, LOOP_NAMES.int, 'int');
      const elt = elementInt(scope, name);
      const cond = s.fn.rng.bool(0.4) ? ` if ${cmp(scope, name)}` : '';
      return expr(`[${elt} for ${name} in ${wrap(src, PREC.or)}${cond}]`, 'list_int', A, 'listcomp');
    }],
    [2.5, (s, b) => {
      const src = gen(s, 'list_int', b - 1);
      const form = s.fn.rng.int(3);
      if (form === 0) return expr(`sorted(${src.code})`, 'list_int', A);
      if (form === 1) return expr(`sorted(${src.code}, reverse=True)`, 'list_int', A);
      return expr(`${wrap(src, A)}[${slice(s, b)}]`, 'list_int', A, 'slice');
    }],
    [1, (s, b) => expr(s.fn.rng.bool() ? `list(range(${k(s, 1, 6)}))` : `list(range(${wrap(gen(s, 'int', b - 1), PREC.mul)} % ${k(s, 3, 7)}))`, 'list_int', A)],
    [1, (s, b) => {
      const src = gen(s, 'list_str', b - 1);
      const { name } = bind(s, LOOP_NAMES.str, 'str');
      return expr(`[len(${name}) for ${name} in ${wrap(src, PREC.or)}]`, 'list_int', A, 'listcomp');
    }],
    [0.8, (s) => {
      const d = v(s, 'dict');
      return d ? expr(`list(${d.code}.values())`, 'list_int', A, 'dict_method') : null;
    }],
    [1, (s, b) => expr(`${wrap(gen(s, 'list_int', b - 1), PREC.add)} + [${gen(s, 'int', b - 1).code}]`, 'list_int', PREC.add)],
    [0.8, (s, b) => {
      const src = gen(s, 'str', b - 1);
      const { name } = bind(s, LOOP_NAMES.str, 'str');
      return expr(`[int(${name}) for ${name} in ${wrap(src, PREC.or)} if ${name}.isdigit()]`, 'list_int', A, 'listcomp', 'str_method');
    }],
    [0.8, (s) => {
      const m = v(s, 'matrix');
      if (!m) return null;
      const { name } = bind(s, LOOP_NAMES.list_int, 'list_int');
      return expr(s.fn.rng.bool() ? `[sum(${name}) for ${name} in ${m.code}]` : `[len(${name}) for ${name} in ${m.code}]`, 'list_int', A, 'listcomp');
    }],
    [0.5, (s) => {
      const t = v(s, 'tuple');
      return t ? expr(`list(${t.code})`, 'list_int', A) : null;
    }],
  ],
  list_str: [
    [6, (s) => v(s, 'list_str')],
    [0.5, (s) => constant(s, 'list_str')],
    [2, (s, b) => expr(s.fn.rng.bool() ? `${wrap(gen(s, 'str', b - 1), A)}.split()` : `${wrap(gen(s, 'str', b - 1), A)}.split(${nonEmptyChar(s)})`, 'list_str', A, 'str_method')],
    [1, (s, b) => expr(`list(${gen(s, 'str', b - 1).code})`, 'list_str', A)],
    [1, (s) => {
      const d = v(s, 'dict');
      return d ? expr(s.fn.rng.bool() ? `sorted(${d.code})` : `list(${d.code}.keys())`, 'list_str', A, 'dict_method') : null;
    }],
    [1.5, (s, b) => {
      const src = gen(s, 'list_str', b - 1);
      return s.fn.rng.bool() ? expr(`sorted(${src.code})`, 'list_str', A) : expr(`${wrap(src, A)}[${slice(s, b)}]`, 'list_str', A, 'slice');
    }],
    [2, (s, b) => {
      const src = gen(s, 'list_str', b - 1);
      const { scope, name } = bind(s, LOOP_NAMES.str, 'str');
      const m = s.fn.rng.choice(['upper()', 'strip()', 'lower()', 'capitalize()', '[::-1]', '[:2]']);
      const sep = m.startsWith('[') ? '' : '.';
      const cond = s.fn.rng.bool(0.4) ? ` if len(${name}) > ${k(scope, 0, 3)}` : '';
      return expr(`[${name}${sep}${m} for ${name} in ${wrap(src, PREC.or)}${cond}]`, 'list_str', A, 'listcomp', sep ? 'str_method' : 'slice');
    }],
    [1, (s, b) => {
      const src = gen(s, 'list_int', b - 1);
      const { name } = bind(s, LOOP_NAMES.int, 'int');
      return expr(`[str(${name}) for ${name} in ${wrap(src, PREC.or)}]`, 'list_str', A, 'listcomp');
    }],
    [1, (s, b) => {
      const src = gen(s, 'str', b - 1);
      const { name } = bind(s, LOOP_NAMES.str, 'str');
      return expr(`[${name} for ${name} in ${wrap(src, PREC.or)} if ${name}.${s.fn.rng.choice(['isalpha', 'isdigit', 'islower'])}()]`, 'list_str', A, 'listcomp', 'str_method');
    }],
  ],
  dict: [
    [6, (s) => v(s, 'dict')],
    [1, (s) => constant(s, 'dict')],
    [1.5, (s, b) => {
      const src = gen(s, 'list_str', b - 1);
      const { name } = bind(s, LOOP_NAMES.str, 'str');
      const val = s.fn.rng.choice([`len(${name})`, `${k(s, 0, 2)}`, `${wrap(src, A)}.count(${name})`]);
      return expr(`{${name}: ${val} for ${name} in ${wrap(src, PREC.or)}}`, 'dict', A, 'dictcomp');
    }],
    [1, (s, b) => expr(`dict(zip(${gen(s, 'list_str', b - 1).code}, ${gen(s, 'list_int', b - 1).code}))`, 'dict', A)],
    [1.5, (s) => {
      const d = v(s, 'dict');
      if (!d) return null;
      const kk = s.fn.fresh(LOOP_NAMES.key);
      const vv = s.fn.fresh(['v', 'val', 'cnt', 'amount']);
      const scope = s.child();
      scope.add(vv, 'int');
      const val = s.fn.rng.choice([`${vv} * ${k(s, 2, 3)}`, `${vv} + ${k(s, 1, 5)}`, `-${vv}`, vv]);
      const cond = s.fn.rng.bool(0.5) ? ` if ${cmp(scope, vv)}` : '';
      return expr(`{${kk}: ${val} for ${kk}, ${vv} in ${d.code}.items()${cond}}`, 'dict', A, 'dictcomp', 'dict_method');
    }],
    [0.8, (s, b) => expr(`dict.fromkeys(${gen(s, 'list_str', b - 1).code}, ${k(s, 0, 1)})`, 'dict', A, 'dict_method')],
    [0.8, (s) => {
      const x = v(s, 'str');
      if (!x) return null;
      const { name } = bind(s, LOOP_NAMES.str, 'str');
      return expr(`{${name}: ${x.code}.count(${name}) for ${name} in ${x.code}}`, 'dict', A, 'dictcomp', 'str_method');
    }],
  ],
  tuple: [
    [5, (s) => v(s, 'tuple')],
    [2, (s, b) => expr(`(${gen(s, 'int', b - 1).code}, ${gen(s, 'int', b - 1).code})`, 'tuple', A)],
    [1, (s, b) => expr(`divmod(${gen(s, 'int', b - 1).code}, ${k(s, 2, 7)})`, 'tuple', A)],
    [0.7, (s, b) => expr(`tuple(sorted((${gen(s, 'int', b - 1).code}, ${gen(s, 'int', b - 1).code})))`, 'tuple', A)],
  ],
  matrix: [
    [5, (s) => v(s, 'matrix')],
    [1, (s, b) => {
      const src = gen(s, 'list_int', b - 1);
      const { name } = bind(s, LOOP_NAMES.int, 'int');
      return expr(`[[${name}, ${name} * ${k(s, 2, 3)}] for ${name} in ${wrap(src, PREC.or)}]`, 'matrix', A, 'listcomp');
    }],
    [0.6, (s) => {
      const m = v(s, 'matrix');
      if (!m) return null;
      const { name } = bind(s, LOOP_NAMES.list_int, 'list_int');
      return expr(`[${name}[::-1] for ${name} in ${m.code}]`, 'matrix', A, 'listcomp', 'slice');
    }],
  ],
};

/**
 * Thrown by a sub-expression request for a type that no variable in scope has. Not an Error, and
 * one shared instance: it is control flow thrown thousands of times per program, and capturing
 * an Error's stack trace each time was a third of the generator's time.
 */
class NoSource {}
const NO_SOURCE = new NoSource();
let nesting = 0;

/**
 * A typed expression of at most `budget` levels; leaves when the budget is spent. A
 * sub-expression of a container/str type that no variable has is usually refused (the
 * production is retried with another), so expressions compute on the program's data rather
 * than on literals like `'ab'.upper()`.
 */
export function gen(s: Scope, ty: Ty, budget: number): Expr {
  const prods = P[ty];
  if (!prods) throw new Error(`gen: no productions for ${ty}`);
  const rng = s.fn.rng;
  const sub = nesting > 0;
  if (sub && ty !== 'int' && ty !== 'bool' && !s.has(ty) && rng.bool(0.9)) throw NO_SOURCE;
  if (budget <= 0) return v(s, ty) ?? constant(s, ty);
  const weights = prods.map(([w]) => w);
  let fallback: Expr | undefined;
  nesting++;
  try {
    for (let attempt = 0; attempt < 10; attempt++) {
      try {
        const e = prods[rng.weighted(weights)][1](s, budget);
        if (!e) continue;
        // A statement-level expression must read the program's data, not only literals.
        if (sub || mentionsVar(s, e.code)) return e;
        fallback ??= e;
      } catch (err) {
        if (!(err instanceof NoSource)) throw err;
      }
    }
  } finally {
    nesting--;
  }
  return v(s, ty) ?? fallback ?? constant(s, ty);
}

function slice(s: Scope, b: number): string {
  const rng = s.fn.rng;
  const form = rng.int(7);
  if (form === 0) return '::-1';
  if (form === 1) return `${rng.range(1, 3)}:`;
  if (form === 2) return `:${rng.range(1, 4)}`;
  if (form === 3) return `::${rng.choice([2, 3, -2])}`;
  if (form === 4) return `${rng.range(0, 2)}:${rng.range(-2, 5)}`;
  if (form === 5) return `:-${rng.range(1, 2)}`;
  return `:${wrap(gen(s, 'int', Math.min(b - 1, 1)), PREC.add)}`;
}

export { cmp, strKey };

import { gen } from './exprs';
import { expr, isName, PREC, pyStr, type Stmt, type Ty } from './ir';
import type { Scope } from './scope';
import { CHAR_CONSTS, LOOP_NAMES } from './values';

/**
 * `generator.stringLoops`: a loop over a string's characters — a string in scope (often the
 * entry's parameter), else a string expression — whose body folds the character into an
 * accumulator more often than not, the way real code counts, filters and rebuilds strings.
 * `block` generates the loop's other statements (body.ts): up to one beside a fold (`short`),
 * a block's usual number otherwise.
 */
export function stringLoop(s: Scope, block: (body: Scope, short: boolean) => Stmt[]): Stmt[] {
  const rng = s.fn.rng;
  const before: Stmt[] = [];
  const fold = rng.bool(0.7) ? charFold(s, before) : undefined;
  const body = s.child('for');
  const seq = s.pick('str');
  let iter = seq && rng.bool(0.8) ? expr(seq.name, 'str', PREC.atom) : gen(s, 'str', 1);
  if (isName(iter.code)) body.freeze(iter.code);
  const c = s.fn.fresh(LOOP_NAMES.str);
  body.add(c, 'str');
  body.freeze(c);
  let target = c;
  if (rng.bool(0.2)) {
    const i = s.fn.fresh(LOOP_NAMES.index);
    body.add(i, 'int');
    body.freeze(i);
    iter = expr(`enumerate(${iter.code})`, 'list_int', PREC.atom, ...iter.tags, 'tuple_unpack');
    target = `${i}, ${c}`;
  }
  const stmts = fold ? [fold(c), ...block(body, true)] : block(body, false);
  return [...before, { k: 'for', target, iter, body: stmts, nested: s.loopDepth > 0 }];
}

/**
 * The statement that folds a loop's character `c` into an accumulator: an int counter, a
 * string being rebuilt, a list of kept characters or a dict of counts — one in scope, or a
 * fresh one whose initialisation goes into `before`.
 */
function charFold(s: Scope, before: Stmt[]): (c: string) => Stmt {
  const rng = s.fn.rng;
  const ty = rng.choice(['int', 'int', 'str', 'str', 'list_str', 'dict'] as Ty[]);
  let acc = rng.bool(0.5) ? s.pick(ty, { writable: true })?.name : undefined;
  if (!acc) {
    acc = s.fn.fresh(ty === 'int' ? ['n', 'count', 'total', 'hits'] : ty === 'str' ? ['out', 'result', 'acc', 'res'] : ty === 'dict' ? ['counts', 'freq', 'seen'] : ['kept', 'chars', 'letters']);
    const init = { int: '0', str: "''", list_str: '[]', dict: '{}' }[ty as 'int' | 'str' | 'list_str' | 'dict'];
    before.push({ k: 'assign', target: acc, value: expr(init, ty, PREC.atom) });
    s.add(acc, ty);
  }
  const a = acc;
  const other = s.pick('str');
  const test = (c: string) =>
    rng.choice([
      `${c} == ${pyStr(rng.choice(CHAR_CONSTS))}`,
      `${c} in ${pyStr(rng.choice(['aeiou', 'xyz', '0123456789', ' ', 'abc']))}`,
      other && other.name !== c ? `${c} == ${other.name}` : `${c}.isdigit()`,
      `${c}.${rng.choice(['isalpha', 'isupper', 'isdigit', 'islower'])}()`,
    ]);
  switch (ty) {
    case 'int':
      return (c) => ({ k: 'aug', target: a, op: '+', value: expr(rng.bool(0.75) ? `int(${test(c)})` : `ord(${c}) % ${rng.range(3, 9)}`, 'int', PREC.atom) });
    case 'str': {
      const form = rng.int(4);
      const piece = (c: string) =>
        form === 1 ? expr(`${c}.${rng.choice(['upper', 'lower', 'swapcase'])}()`, 'str', PREC.atom, 'str_method') : form === 2 ? expr(`${c} * ${rng.range(2, 3)}`, 'str', PREC.mul) : expr(c, 'str', PREC.atom);
      return (c) => (form === 0 ? { k: 'assign', target: a, value: expr(`${c} + ${a}`, 'str', PREC.add) } : { k: 'aug', target: a, op: '+', value: piece(c) });
    }
    case 'list_str':
      return (c) => ({ k: 'expr', value: expr(`${a}.append(${c})`, 'int', PREC.atom, 'list_method') });
    default:
      return (c) => ({ k: 'assign', target: `${a}[${c}]`, value: expr(`${a}.get(${c}, 0) + 1`, 'int', PREC.add, 'dict_method') });
  }
}

/**
 * The small, self-contained code snippets the expression productions (exprs.ts) splice in:
 * comparisons, element transforms, constant characters and dict keys. None of them generates
 * a sub-expression, so they live apart from the production table.
 */
import { pyStr } from './ir';
import type { Scope } from './scope';
import { CHAR_CONSTS, DICT_KEYS } from './values';

/** Whether the code names a variable of the scope (true when the scope has none). */
export function mentionsVar(s: Scope, code: string): boolean {
  const names = new Set(s.all().map((x) => x.name));
  if (names.size === 0) return true;
  for (const m of code.matchAll(/[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)?/g)) {
    if (names.has(m[0]) || names.has(m[0].split('.')[0])) return true;
  }
  return false;
}

/** A comparison of an int variable with something small. */
export function cmp(s: Scope, name: string): string {
  const rng = s.fn.rng;
  const form = rng.int(4);
  if (form === 0) return `${name} % ${rng.range(2, 3)} == ${rng.range(0, 1)}`;
  if (form === 1) return `${name} ${rng.choice(['>', '<', '>=', '!='])} ${rng.range(-1, 10)}`;
  const other = s.pick('int');
  if (form === 2 && other && other.name !== name) return `${name} ${rng.choice(['>', '<', '=='])} ${other.name}`;
  return `${name} ${rng.choice(['>', '<'])} ${rng.range(0, 6)}`;
}

export function elementInt(s: Scope, name: string): string {
  const rng = s.fn.rng;
  const other = s.pick('int');
  const forms = [`${name} * ${rng.range(2, 4)}`, `${name} + ${rng.range(1, 9)}`, `${name} % ${rng.range(2, 7)}`, `abs(${name})`, `-${name}`, `${name} // ${rng.range(2, 3)}`];
  if (other && other.name !== name) forms.push(`${name} + ${other.name}`, `${name} - ${other.name}`);
  return rng.choice(forms);
}

export function nonEmptyChar(s: Scope): string {
  return pyStr(s.fn.rng.choice(CHAR_CONSTS.filter((c) => c !== '')));
}

/** A dict key: a constant key or a string variable. */
export function strKey(s: Scope, b: number): string {
  const x = s.pick('str');
  if (x && s.fn.rng.bool(0.4) && b > 0) return x.name;
  return pyStr(s.fn.rng.choice(DICT_KEYS));
}

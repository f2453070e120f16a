import { Rng } from '../util/rng';
import { gen } from './exprs';
import { expr, PREC, type Expr, type FuncDef, type Stmt, type Ty } from './ir';
import type { Scope } from './scope';

/**
 * Bounded recursive helpers. Each template recurses on a value that strictly shrinks toward
 * its base case (a list/string tail, an int capped by `min(abs(..), K)` at the call site, a
 * gcd remainder), so the recursion depth is at most ~10 frames for CruxEval-sized inputs.
 */
export interface RecursiveHelper {
  def: FuncDef;
  ret: Ty;
  /** Builds the argument list at a call site. */
  args: (s: Scope) => string;
}

const ret = (code: string): Stmt => ({ k: 'return', value: expr(code, 'int', PREC.atom), early: false });
const early = (code: string): Stmt => ({ k: 'return', value: expr(code, 'int', PREC.atom), early: true });
const cond = (code: string): Expr => expr(code, 'bool', PREC.cmp);
const ifRet = (c: string, v: string): Stmt => ({ k: 'if', branches: [{ cond: cond(c), body: [early(v)] }] });
const capped = (s: Scope, k: number) => `min(abs(${gen(s, 'int', 1).code}), ${k})`;

type Template = (rng: Rng, name: string) => RecursiveHelper;

const TEMPLATES: Array<{ names: string[]; make: Template }> = [
  {
    names: ['sum_down', 'triangle', 'accumulate', 'count_down'],
    make: (rng, name) => {
      const op = rng.choice(['+', '+', '-', '*']);
      const base = op === '*' ? '1' : rng.choice(['0', '1']);
      return {
        ret: 'int',
        def: { name, params: ['n'], tags: ['recursion'], body: [ifRet('n <= 0', base), ret(`n ${op} ${name}(n - 1)`)] },
        args: (s) => capped(s, rng.range(4, 8)),
      };
    },
  },
  {
    names: ['total', 'sum_list', 'rec_sum', 'count_even', 'largest'],
    make: (rng, name) => {
      const form = rng.int(3);
      const tail = `${name}(xs[1:])`;
      const combine = form === 0 ? `xs[0] + ${tail}` : form === 1 ? `(1 if xs[0] % 2 == 0 else 0) + ${tail}` : `max(xs[0], ${tail})`;
      return {
        ret: 'int',
        def: { name, params: ['xs'], tags: ['recursion'], body: [ifRet('not xs', form === 2 ? '-1' : '0'), ret(combine)] },
        args: (s) => gen(s, 'list_int', 1).code,
      };
    },
  },
  {
    names: ['reverse', 'strip_vowels', 'rev_text', 'compress'],
    make: (rng, name) => {
      if (rng.bool()) {
        return {
          ret: 'str',
          def: { name, params: ['s'], tags: ['recursion'], body: [ifRet('len(s) <= 1', 's'), ret(`${name}(s[1:]) + s[0]`)] },
          args: (s) => gen(s, 'str', 1).code,
        };
      }
      const set = rng.choice(['aeiou', 'aeiouAEIOU', ' -_', '0123456789']);
      return {
        ret: 'str',
        def: {
          name,
          params: ['s'],
          tags: ['recursion'],
          body: [
            ifRet('not s', "''"),
            { k: 'assign', target: 'rest', value: expr(`${name}(s[1:])`, 'str', PREC.atom) },
            ifRet(`s[0] in '${set}'`, 'rest'),
            ret('s[0] + rest'),
          ],
        },
        args: (s) => gen(s, 'str', 1).code,
      };
    },
  },
  {
    names: ['gcd', 'common_divisor'],
    make: (rng, name) => ({
      ret: 'int',
      def: { name, params: ['a', 'b'], tags: ['recursion'], body: [ifRet('b == 0', 'a'), ret(`${name}(b, a % b)`)] },
      args: (s) => `abs(${gen(s, 'int', 1).code}), abs(${gen(s, 'int', 1).code})`,
    }),
  },
  {
    names: ['count_digits', 'digit_sum', 'num_len'],
    make: (rng, name) => {
      const sum = rng.bool();
      return {
        ret: 'int',
        def: { name, params: ['n'], tags: ['recursion'], body: [ifRet('n < 10', sum ? 'n' : '1'), ret(sum ? `n % 10 + ${name}(n // 10)` : `1 + ${name}(n // 10)`)] },
        args: (s) => `abs(${gen(s, 'int', 1).code})`,
      };
    },
  },
  {
    names: ['is_palindrome', 'mirrored', 'symmetric'],
    make: (rng, name) => ({
      ret: 'bool',
      def: { name, params: ['s'], tags: ['recursion'], body: [ifRet('len(s) < 2', 'True'), ifRet('s[0] != s[-1]', 'False'), ret(`${name}(s[1:-1])`)] },
      args: (s) => gen(s, 'str', 1).code,
    }),
  },
  {
    names: ['fib', 'ways', 'stairs'],
    make: (rng, name) => ({
      ret: 'int',
      def: { name, params: ['n'], tags: ['recursion'], body: [ifRet('n < 2', rng.choice(['n', '1'])), ret(`${name}(n - 1) + ${name}(n - 2)`)] },
      args: (s) => capped(s, rng.range(3, 6)),
    }),
  },
  {
    names: ['weighted_sum', 'scan_from', 'walk'],
    make: (rng, name) => {
      const w = rng.range(2, 4);
      return {
        ret: 'int',
        def: { name, params: ['xs', 'i'], tags: ['recursion'], body: [ifRet('i >= len(xs)', '0'), ret(`xs[i] * ${rng.bool() ? 'i' : w} + ${name}(xs, i + 1)`)] },
        args: (s) => `${gen(s, 'list_int', 1).code}, 0`,
      };
    },
  },
  {
    names: ['power_mod', 'fast_pow'],
    make: (rng, name) => {
      const mod = rng.choice([97, 1000, 13]);
      return {
        ret: 'int',
        def: {
          name,
          params: ['base', 'exp'],
          tags: ['recursion'],
          body: [
            ifRet('exp == 0', '1'),
            { k: 'assign', target: 'half', value: expr(`${name}(base, exp // 2)`, 'int', PREC.atom) },
            ifRet('exp % 2 == 1', `half * half * base % ${mod}`),
            ret(`half * half % ${mod}`),
          ],
        },
        args: (s) => `${gen(s, 'int', 1).code}, ${capped(s, 12)}`,
      };
    },
  },
];

export function recursiveHelper(rng: Rng, taken: Set<string>): RecursiveHelper {
  const t = rng.choice(TEMPLATES);
  let name = t.names.find((n) => !taken.has(n) && rng.bool(0.6)) ?? t.names.find((n) => !taken.has(n)) ?? `${t.names[0]}_rec`;
  while (taken.has(name)) name += '_';
  taken.add(name);
  return t.make(rng, name);
}

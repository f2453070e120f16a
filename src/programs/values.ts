import { Rng } from '../util/rng';
import { pyStr, type Ty } from './ir';

/**
 * Names and input values in CruxEval's flavour: short meaningful-ish identifiers per type and
 * small random inputs (lists of up to 8 items, ints mostly in -10..50, strings of letters,
 * words, digits and a little punctuation), printed as Python literals.
 */
export const NAMES: Record<string, string[]> = {
  int: ['count', 'total', 'n', 'k', 'acc', 'best', 'step', 'score', 'diff', 'num', 'value', 'pos', 'size', 'limit', 'offset', 'shift', 'cnt', 'res', 'width', 'level'],
  str: ['text', 's', 'word', 'out', 'prefix', 'suffix', 'line', 'name', 'label', 'token', 'key', 'sep', 'msg', 'chars', 'tail', 'head', 'code', 'st'],
  bool: ['flag', 'found', 'ok', 'is_valid', 'done', 'changed', 'seen_all', 'matched'],
  list_int: ['nums', 'items', 'values', 'arr', 'stack', 'numbers', 'seq', 'data', 'scores', 'buf', 'heights', 'xs', 'digits', 'costs'],
  list_str: ['words', 'parts', 'names', 'tokens', 'letters', 'keys', 'lines', 'labels', 'pieces', 'chunks'],
  dict: ['counts', 'd', 'freq', 'mapping', 'table', 'lookup', 'stock', 'weights', 'ages', 'seen'],
  tuple: ['pair', 'point', 'span', 'bounds', 'coords', 'entry'],
  matrix: ['matrix', 'grid', 'rows', 'board', 'table2d'],
  opt_int: ['start', 'default', 'cap', 'target', 'fill'],
};

export const LOOP_NAMES: Record<string, string[]> = {
  int: ['x', 'n', 'v', 'num', 'val', 'item', 'e'],
  str: ['ch', 'c', 'w', 'word', 'part', 'letter', 'tok'],
  index: ['i', 'j', 'idx', 'pos'],
  list_int: ['row', 'line', 'group'],
  key: ['k', 'key', 'name'],
};

const VERBS = ['compute', 'count', 'build', 'merge', 'scan', 'collect', 'apply', 'reduce', 'clean', 'split', 'pack', 'shift', 'score', 'check', 'find', 'update', 'encode', 'rotate', 'filter', 'normalize', 'group', 'tally', 'trim', 'expand'];
const NOUNS = ['items', 'values', 'text', 'chars', 'words', 'pairs', 'counts', 'keys', 'total', 'digits', 'parts', 'block', 'tokens', 'entries', 'window', 'prefix', 'row', 'weights', 'scores', 'labels'];
export const CLASS_NAMES = ['Counter', 'Stack', 'Buffer', 'Tracker', 'Inventory', 'Ledger', 'Queue', 'Accumulator', 'Matcher', 'Grid', 'Registry', 'Window', 'Wallet', 'Cart', 'Scoreboard', 'Parser', 'Cache', 'Bucket'];
export const METHOD_NAMES = ['add', 'push', 'update', 'apply', 'feed', 'record', 'consume', 'process', 'step', 'merge', 'take', 'put', 'register', 'scan', 'collect', 'summary', 'total', 'result', 'snapshot', 'report'];
export const ERROR_CLASS_NAMES = ['InvalidInput', 'EmptyError', 'LimitExceeded', 'BadValue', 'ParseError'];

/**
 * The entry function's name when names vary: a plain verb (`count`), a verb_noun (`count_words`)
 * or, for some programs, CruxEval's `f`, so a model learns to copy the call from the program
 * instead of memorizing one name.
 */
export function entryName(rng: Rng, taken: Set<string>): string {
  const r = rng.next();
  if (r < 0.15) return 'f';
  if (r < 0.5) {
    const v = rng.choice(VERBS);
    if (!taken.has(v)) return v;
  }
  return helperName(rng, taken);
}

export function helperName(rng: Rng, taken: Set<string>): string {
  for (let i = 0; i < 20; i++) {
    const n = `${rng.choice(VERBS)}_${rng.choice(NOUNS)}`;
    if (!taken.has(n)) return n;
  }
  let i = 2;
  while (taken.has(`helper${i}`)) i++;
  return `helper${i}`;
}

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const LETTER_LIST = [...LETTERS];
/** Keywords, and builtins short enough to be drawn that the generator's own list lacks. */
const RESERVED = new Set([
  'and', 'as', 'assert', 'async', 'await', 'break', 'case', 'class', 'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in', 'is', 'lambda', 'match', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'type', 'while', 'with', 'yield',
  'ascii', 'bin', 'bytes', 'eval', 'exec', 'float', 'help', 'hex', 'oct', 'repr', 'slice', 'super',
]);

/**
 * A variable name outside the per-type lists: a single letter (`s`, `t`), or two to six letters
 * with at times an underscore part or a digit (`qed`, `vo_k`, `mrt2`). Never a keyword or a builtin.
 */
export function wideName(rng: Rng): string {
  for (;;) {
    let name = rng.bool(0.4) ? rng.choice(LETTER_LIST) : letters(rng, rng.range(2, 6));
    if (name.length > 1 && rng.bool(0.2)) name += `_${letters(rng, rng.range(1, 3))}`;
    else if (rng.bool(0.1)) name += String(rng.range(0, 9));
    if (!RESERVED.has(name)) return name;
  }
}

function letters(rng: Rng, n: number): string {
  return Array.from({ length: n }, () => rng.choice(LETTER_LIST)).join('');
}

const WORDS = ['apple', 'cat', 'dog', 'sun', 'tree', 'blue', 'red', 'go', 'hello', 'world', 'data', 'code', 'x', 'py', 'abc', 'moon', 'star', 'key', 'open', 'zip', 'a', 'an', 'the', 'box', 'bird'];
export const CHAR_CONSTS = ['a', 'e', 'o', 'x', 'z', ' ', '-', '_', '.', ',', '1', '0', '#', '*'];
export const STR_CONSTS = ['', 'a', 'ab', 'x', '-', ' ', '#', 'ok', 'abc', 'end', 'ing', 'the', ':', ', ', '!', 'zz'];
export const DICT_KEYS = ['a', 'b', 'c', 'x', 'y', 'key', 'id', 'total', 'red', 'blue', 'cat', 'dog'];

export function randomInt(rng: Rng): number {
  const r = rng.next();
  if (r < 0.15) return rng.range(-10, -1);
  if (r < 0.3) return rng.range(0, 3);
  if (r < 0.9) return rng.range(4, 30);
  return rng.range(31, 99);
}

export function randomStr(rng: Rng): string {
  const kind = rng.int(6);
  if (kind === 0) return Array.from({ length: rng.range(0, 9) }, () => rng.choice([...LETTERS])).join('');
  if (kind === 1) return Array.from({ length: rng.range(1, 4) }, () => rng.choice(WORDS)).join(' ');
  if (kind === 2) return Array.from({ length: rng.range(1, 8) }, () => rng.choice([...'abcdef0123456789'])).join('');
  if (kind === 3) return Array.from({ length: rng.range(2, 5) }, () => rng.choice(WORDS)).join(rng.choice([',', '-', ' ', '_']));
  if (kind === 4) {
    const s = Array.from({ length: rng.range(2, 10) }, () => rng.choice([...(LETTERS + LETTERS.toUpperCase() + ' !.')])).join('');
    return s;
  }
  return rng.choice(WORDS) + (rng.bool() ? String(rng.range(0, 99)) : '');
}

/** A random value of type `ty` printed as a Python literal. */
export function randomLiteral(rng: Rng, ty: Ty): string {
  switch (ty) {
    case 'int':
      return String(randomInt(rng));
    case 'str':
      return pyStr(randomStr(rng));
    case 'bool':
      return rng.bool() ? 'True' : 'False';
    case 'opt_int':
      return rng.bool(0.4) ? 'None' : String(randomInt(rng));
    case 'list_int':
      return `[${Array.from({ length: listLen(rng) }, () => String(randomInt(rng))).join(', ')}]`;
    case 'list_str':
      return `[${Array.from({ length: listLen(rng) }, () => pyStr(rng.bool(0.6) ? rng.choice(WORDS) : randomStr(rng))).join(', ')}]`;
    case 'dict': {
      const n = rng.range(0, 5);
      const keys = rng.shuffle([...DICT_KEYS]).slice(0, n);
      return `{${keys.map((k) => `${pyStr(k)}: ${randomInt(rng)}`).join(', ')}}`;
    }
    case 'tuple':
      return `(${Array.from({ length: rng.range(2, 4) }, () => String(randomInt(rng))).join(', ')})`;
    case 'matrix': {
      const rows = rng.range(1, 4);
      const cols = rng.range(1, 4);
      return `[${Array.from({ length: rows }, () => `[${Array.from({ length: cols }, () => String(rng.range(-5, 20))).join(', ')}]`).join(', ')}]`;
    }
    default:
      throw new Error(`randomLiteral: no literal for ${ty}`);
  }
}

function listLen(rng: Rng): number {
  return rng.bool(0.08) ? 0 : rng.range(1, 8);
}

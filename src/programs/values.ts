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

/*
 * Made-up words for string inputs (`generator.wideStrings`): English-like syllables, so a word
 * spells itself with the tokenizer's ordinary pieces (`ber` `ry`, `str` `ing`) rather than the
 * few that the word lists and random letters use. A model trained only on those learns which
 * pieces a string value may hold, and gives a piece outside them no chance even while it is
 * copying (`count("berry", "r")`: `err` got p < 0.001 after `'b`; docs/programs.md).
 */
const ONSETS = ['', '', 'b', 'c', 'd', 'f', 'g', 'h', 'j', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't', 'v', 'w', 'y', 'z', 'bl', 'br', 'ch', 'cl', 'cr', 'dr', 'fl', 'fr', 'gl', 'gr', 'pl', 'pr', 'qu', 'sc', 'sh', 'sk', 'sl', 'sm', 'sn', 'sp', 'st', 'str', 'sw', 'th', 'tr', 'wh'];
const NUCLEI = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'i', 'o', 'y', 'ai', 'ea', 'ee', 'oo', 'ou', 'ie', 'oa', 'ay', 'ow'];
const CODAS = ['', '', '', '', '', '', 'b', 'ck', 'd', 'ff', 'g', 'l', 'll', 'm', 'n', 'nd', 'ng', 'nk', 'nt', 'p', 'r', 'rr', 'rd', 'rn', 'rs', 'rt', 's', 'ss', 'st', 't', 'tt', 'x', 'sh', 'th', 'ch'];
const JOINERS = [' ', ' ', '_', '-', '', ', ', '.'];

/** One made-up word of one to three syllables (`berry`, `straw`, `glint`, `oubrend`). */
export function madeUpWord(rng: Rng): string {
  const syllables = rng.weighted([5, 4, 1]) + 1;
  let w = '';
  for (let i = 0; i < syllables; i++) w += rng.choice(ONSETS) + rng.choice(NUCLEI) + rng.choice(CODAS);
  return w;
}

/**
 * A string input of made-up words: mostly one word, at times a few joined by a space or a
 * separator, capitalized or upper-cased or followed by a number now and then.
 */
export function wideString(rng: Rng): string {
  const words = Array.from({ length: rng.weighted([7, 2, 1]) + 1 }, () => madeUpWord(rng));
  let s = words.join(rng.choice(JOINERS));
  const style = rng.int(12);
  if (style === 0) s = s[0].toUpperCase() + s.slice(1);
  else if (style === 1) s = s.toUpperCase();
  else if (style === 2) s += String(rng.range(0, 99));
  return s;
}

/**
 * Where string inputs come from. `rng` draws what it always drew, so the main stream is the
 * same whatever `wide` says; a `wide` stream then replaces a share of the strings with made-up
 * words (the entry call's strings and list items; the program's own constants are left as
 * they are).
 */
export interface StringSource {
  wide?: { rng: Rng; share: number };
}

function inputStr(drawn: string, src: StringSource): string {
  return src.wide?.rng.bool(src.wide.share) ? wideString(src.wide.rng) : drawn;
}

/** A random value of type `ty` printed as a Python literal. */
export function randomLiteral(rng: Rng, ty: Ty, src: StringSource = {}): string {
  switch (ty) {
    case 'int':
      return String(randomInt(rng));
    case 'str':
      return pyStr(inputStr(randomStr(rng), src));
    case 'bool':
      return rng.bool() ? 'True' : 'False';
    case 'opt_int':
      return rng.bool(0.4) ? 'None' : String(randomInt(rng));
    case 'list_int':
      return `[${Array.from({ length: listLen(rng) }, () => String(randomInt(rng))).join(', ')}]`;
    case 'list_str':
      return `[${Array.from({ length: listLen(rng) }, () => pyStr(inputStr(rng.bool(0.6) ? rng.choice(WORDS) : randomStr(rng), src))).join(', ')}]`;
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

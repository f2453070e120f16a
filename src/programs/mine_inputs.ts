import { Rng } from '../util/rng';
import { pyStr, type Ty } from './ir';
import { randomInt, randomLiteral, randomStr, wideString } from './values';

/**
 * Inputs for a mined function, guided by what its code says (the hints mine_extract.py
 * gathers): doctest calls and literal call sites elsewhere in the corpus first, verbatim; then
 * draws per parameter from its default, the literals it is compared with, its annotation, and
 * the types its uses imply (`s.split()` → str, `range(n)` → int, `for x in xs` → a sequence),
 * with values from the generator's machinery (values.ts).
 */
export interface ParamHint {
  name: string;
  annotation: string | null;
  default: string | null;
  has_default: boolean;
  uses: string[];
  values: string[];
}

export interface FunctionHints {
  params: ParamHint[];
  required: number;
  doctests: string[];
  callsites: string[];
  strings: string[];
  ints: number[];
}

/** fn0/fn1/fn2: a builtin callable of that many arguments (a parameter the code calls). */
export type Kind = Ty | 'float' | 'none' | 'set_int' | 'bytes' | 'char' | 'fn0' | 'fn1' | 'fn2';

/** Annotation text → value kind (`list[int]`, `Optional[str]`, `Sequence[str]`, ...). */
export function kindOfAnnotation(a: string | null): Kind | undefined {
  if (!a) return undefined;
  const t = a.replace(/\s+/g, '').replace(/^(typing\.)?Optional\[(.*)\]$/, '$2').replace(/\|None$/, '');
  if (/^(int|SupportsInt|SupportsIndex)$/.test(t)) return 'int';
  if (/^(str|AnyStr|Text)$/.test(t)) return 'str';
  if (t === 'bool') return 'bool';
  if (t === 'float' || t === 'Real' || t === 'Number') return 'float';
  if (t === 'bytes' || t === 'ByteString') return 'bytes';
  if (/^((typing\.)?(List|Sequence|Iterable|Collection|list|tuple|Tuple)\[(int|float)(,\.\.\.)?\])$/.test(t)) return 'list_int';
  if (/^((typing\.)?(List|Sequence|Iterable|Collection|list|tuple|Tuple)\[str(,\.\.\.)?\])$/.test(t)) return 'list_str';
  if (/^(List|Sequence|Iterable|list)/.test(t)) return 'list_int';
  if (/^(Dict|Mapping|dict)/.test(t)) return 'dict';
  if (/^(Set|set|FrozenSet|frozenset)/.test(t)) return 'set_int';
  return undefined;
}

/** The kinds a parameter's uses allow, most specific first. */
function kindsOfUses(uses: string[]): Kind[] {
  const out: Kind[] = [];
  const has = (u: string) => uses.includes(u);
  for (const u of uses) {
    if (u === 'is:int') out.push('int');
    else if (u === 'is:str') out.push('str');
    else if (u === 'is:list' || u === 'is:tuple') out.push('list_int');
    else if (u === 'is:dict') out.push('dict');
    else if (u === 'is:float') out.push('float');
    else if (u === 'is:bytes') out.push('bytes');
    else if (u === 'is:bool') out.push('bool');
  }
  if (has('str')) out.push('str');
  if (has('char')) out.push('char');
  if (has('dict')) out.push('dict');
  if (has('list')) out.push(has('str') ? 'list_str' : 'list_int');
  if (has('set')) out.push('set_int');
  if (has('bytes')) out.push('bytes');
  if (has('int')) out.push('int');
  if (has('num')) out.push(has('seq') ? 'str' : 'int');
  if (has('seq')) out.push('list_int', 'str', 'list_str');
  for (const n of [1, 0, 2]) if (has(`call:${n}`)) out.push(`fn${n}` as Kind);
  return out;
}

/**
 * What a parameter's name conventionally holds (`s`, `text` → str; `n`, `count` → int;
 * `items` → a list; `key`, `func` → a callable): the weakest hint, for parameters whose code
 * says nothing else (it is passed on, compared with another parameter, ...).
 */
const NAME_KINDS: Array<[RegExp, Kind[]]> = [
  [/^(c|ch|char)$/, ['char']],
  [/^(s\d?|st|str|string|text|txt|name|word|line|prefix|suffix|sep|delim(iter)?|pat(tern)?|fmt|format|label|title|msg|message|path|filename|fname|url|host(name)?|ident(ifier)?|token|tag|src|source|chars|encoding|charset|version|email|domain|.*_(str|name|text|string|path|url|prefix|suffix))$/, ['str']],
  [/^(n|i|j|k|m|num|number|count|cnt|size|width|height|length|idx|index|pos|position|start|stop|end|step|offset|base|digits|ndigits|level|depth|year|month|day|hour|minute|second|limit|precision|n?bits|port|(n|num)_.+|.+_(count|size|len|length|index|idx|num|width))$/, ['int']],
  [/^(x|y|z|a|b|lo|hi|low|high|value|val)$/, ['int', 'float']],
  [/^(ratio|rate|alpha|beta|eps|epsilon|tol|scale|factor|prob|p|weight|temperature|fraction)$/, ['float']],
  [/^(words|names|lines|strings|strs|tokens|parts|labels|fields|columns|headers)$/, ['list_str']],
  [/^(items|seq|sequence|lst|list|values|vals|elements|elems|iterable|it|xs|ys|nums|numbers|arr|array|data|indices|ints|iterables?)$/, ['list_int', 'list_str']],
  [/^(d|dct|dic|dict|mapping|table|options|opts|config|cfg|attrs|params|env|kw|kwds)$/, ['dict']],
  [/^(flag|strict|reverse|verbose|force|quiet|ignore_case|(is|has|use|allow|should|can)_.+)$/, ['bool']],
  [/^(func|fn|function|f|pred|predicate|callback|cb|mapper|transform|key_?func|get_key|cond(ition)?)$/, ['fn1']],
  [/^(factory|default_factory|constructor|cls)$/, ['fn0']],
  [/^(op|operator|binop|combine|merge|reducer|binary_op)$/, ['fn2']],
];

export function kindsOfName(name: string): Kind[] {
  const n = name.replace(/^_+/, '').toLowerCase();
  for (const [re, kinds] of NAME_KINDS) if (re.test(n)) return kinds;
  return [];
}

function kindOfLiteral(lit: string): Kind | undefined {
  const t = pyTypeOfArg(lit);
  if (t === 'str') return lit.length === 3 ? 'char' : 'str';
  if (t === 'list') return /^\[['"]/.test(lit) ? 'list_str' : 'list_int';
  return t === undefined || t === 'NoneType' ? undefined : PY_KINDS[t]?.[0];
}

function drawKind(rng: Rng, kind: Kind, h: FunctionHints): string {
  switch (kind) {
    case 'float':
      return (randomInt(rng) / 4).toFixed(2);
    case 'none':
      return 'None';
    case 'tuple':
      return rng.bool(0.5) ? randomLiteral(rng, 'tuple') : `(${pyStr(randomStr(rng))}, ${randomInt(rng)})`;
    case 'set_int':
      return `{${Array.from({ length: rng.range(1, 5) }, () => String(randomInt(rng))).join(', ')}}`;
    case 'bytes':
      return `b${pyStr(randomStr(rng).replace(/[^\x20-\x7e]/g, ''))}`;
    case 'char':
      return pyStr(rng.choice([...'abcxyz019 -_.,']));
    // Builtins, not lambdas: their reprs carry no address and they add no frames of their own.
    case 'fn0':
      return rng.choice(['list', 'dict', 'int', 'str', 'set']);
    case 'fn1':
      return rng.choice(['len', 'str', 'abs', 'bool', 'str.upper', 'sorted', 'repr', 'int']);
    case 'fn2':
      return rng.choice(['max', 'min']);
    case 'str':
      // The code's own string literals make branches reachable (`if s.startswith('0x')`).
      if (h.strings.length && rng.bool(0.35)) {
        const parts = Array.from({ length: rng.range(1, 3) }, () => (rng.bool(0.6) ? rng.choice(h.strings) : randomStr(rng)));
        return pyStr(parts.join(rng.choice(['', ' ', ''])));
      }
      return pyStr(rng.bool(0.3) ? wideString(rng) : randomStr(rng));
    case 'int':
      if (h.ints.length && rng.bool(0.3)) return String(rng.choice(h.ints) + rng.range(-1, 1));
      return String(randomInt(rng));
    default:
      return randomLiteral(rng, kind);
  }
}

const FALLBACK: Kind[] = ['str', 'int', 'list_int', 'list_str', 'dict', 'float', 'bool'];

function drawParam(rng: Rng, p: ParamHint, h: FunctionHints): string {
  if (p.values.length && rng.bool(0.3)) return rng.choice(p.values);
  if (p.default && p.default !== 'None' && rng.bool(0.2)) return p.default;
  const kinds: Kind[] = [];
  const ann = kindOfAnnotation(p.annotation);
  if (ann) kinds.push(ann);
  kinds.push(...kindsOfUses(p.uses));
  const lit = p.default && p.default !== 'None' ? kindOfLiteral(p.default) : p.values.length ? kindOfLiteral(p.values[0]) : undefined;
  if (lit) kinds.push(lit);
  if (!kinds.length) kinds.push(...kindsOfName(p.name));
  // Mostly the best guess, now and then another, so a wrong guess still finds a working input.
  const kind = kinds.length && rng.bool(0.8) ? kinds[rng.bool(0.7) ? 0 : rng.int(kinds.length)] : rng.choice(FALLBACK);
  return drawKind(rng, kind, h);
}

/** One proposed call: its argument text and, for drawn calls, the argument per parameter. */
export interface Call {
  input: string;
  /** Per parameter, in order (drawn and re-drawn calls); absent for the corpus's own calls. */
  args?: string[];
}

/**
 * Up to `n` distinct calls: the corpus's own calls first (at most half), then draws. Optional
 * parameters are passed now and then (positionally, in order), else left to their defaults.
 */
export function candidateCalls(h: FunctionHints, n: number, rng: Rng): Call[] {
  const out: Call[] = [];
  const seen = new Set<string>();
  const add = (s: string, args?: string[]) => {
    if (s.length <= 400 && !seen.has(s)) {
      seen.add(s);
      out.push(args ? { input: s, args } : { input: s });
    }
  };
  for (const s of [...h.doctests, ...h.callsites]) if (out.length < Math.ceil(n / 2)) add(s);
  for (let tries = 0; out.length < n && tries < n * 4; tries++) {
    let count = h.required;
    while (count < h.params.length && rng.bool(0.3)) count++;
    const args = h.params.slice(0, count).map((p) => drawParam(rng, p, h));
    add(args.join(', '), args);
  }
  return out;
}

/** Up to `n` distinct argument strings (`candidateCalls`' inputs). */
export function candidateInputs(h: FunctionHints, n: number, rng: Rng): string[] {
  return candidateCalls(h, n, rng).map((c) => c.input);
}

// ---------------------------------------------------------------------------------------------
// Re-draws from a wrong-type failure. A call that ended in TypeError/AttributeError says, in its
// message, which Python type was wrong and often which one was wanted ("'int' object has no
// attribute 'split'": an int where a str was wanted). The parameters whose argument is of the
// wrong type are drawn again, of the wanted kind when the message names one, else of another kind.

/** Python type names in messages → the kinds that draw them. */
const PY_KINDS: Record<string, Kind[]> = {
  int: ['int'],
  str: ['str', 'char'],
  bool: ['bool'],
  float: ['float'],
  bytes: ['bytes'],
  list: ['list_int', 'list_str'],
  dict: ['dict'],
  set: ['set_int'],
  tuple: ['tuple'],
  NoneType: ['none'],
  builtin_function_or_method: ['fn1', 'fn2'],
  method_descriptor: ['fn1'],
  type: ['fn0', 'fn1'],
};

/** Method name → the kind that has it (mine_hints.py's METHOD_TYPES). */
const METHOD_KIND: Record<string, Kind> = {};
for (const m of 'split strip lstrip rstrip lower upper startswith endswith replace find rfind isdigit isalpha isalnum isspace isupper islower title capitalize encode partition rpartition splitlines zfill center ljust rjust casefold swapcase expandtabs format rsplit removeprefix removesuffix isidentifier isnumeric isdecimal translate join'.split(' ')) METHOD_KIND[m] = 'str';
for (const m of 'append extend insert remove sort reverse'.split(' ')) METHOD_KIND[m] = 'list_int';
for (const m of 'items keys values get setdefault update popitem'.split(' ')) METHOD_KIND[m] = 'dict';
for (const m of 'add discard union intersection difference issubset issuperset'.split(' ')) METHOD_KIND[m] = 'set_int';
for (const m of ['decode', 'hex']) METHOD_KIND[m] = 'bytes';
for (const m of ['bit_length', 'to_bytes', 'conjugate', 'denominator', 'numerator']) METHOD_KIND[m] = 'int';
for (const m of ['is_integer', 'as_integer_ratio']) METHOD_KIND[m] = 'float';

const SEQ: Kind[] = ['list_int', 'str', 'list_str'];

/** The Python type of an argument's literal text, when it is one. */
export function pyTypeOfArg(text: string): string | undefined {
  const t = text.trim();
  if (/^-?\d+$/.test(t)) return 'int';
  if (/^-?(\d+\.\d*|\.\d+)(e-?\d+)?$/.test(t)) return 'float';
  if (/^[bB]['"]/.test(t)) return 'bytes';
  if (/^[rRuU]?['"]/.test(t)) return 'str';
  if (t === 'True' || t === 'False') return 'bool';
  if (t === 'None') return 'NoneType';
  if (t.startsWith('[')) return 'list';
  if (t === '{}' || /^\{.*:/.test(t)) return 'dict';
  if (t.startsWith('{')) return 'set';
  if (t.startsWith('(')) return 'tuple';
  if (/^(list|dict|int|str|set|bool|repr)$/.test(t)) return t === 'repr' ? 'builtin_function_or_method' : 'type';
  if (/^(len|abs|sorted|max|min)$/.test(t)) return 'builtin_function_or_method';
  if (/^str\.\w+$/.test(t)) return 'method_descriptor';
  return undefined;
}

/**
 * What a wrong-type message says: pairs of (the Python type an argument had, the kinds wanted
 * instead; empty when the message does not say). Several pairs when the message is ambiguous
 * (`unsupported operand type(s) for +: 'int' and 'str'`: an int that should be a str, or the
 * other way round). Empty when the message names no type.
 */
export function diagnoseWrongType(error: string): Array<{ bad: string; want: Kind[] }> {
  const m = error.replace(/^\w+: /, '');
  let r: RegExpMatchArray | null;
  const both = (a: string, b: string) => (a === b ? [{ bad: a, want: [] }] : [{ bad: a, want: PY_KINDS[b] ?? [] }, { bad: b, want: PY_KINDS[a] ?? [] }]);
  if ((r = m.match(/^'(\w+)' object has no attribute '(\w+)'/))) return [{ bad: r[1], want: METHOD_KIND[r[2]] ? [METHOD_KIND[r[2]]] : [] }];
  if ((r = m.match(/^can only concatenate (\w+) \(not "(\w+)"\) to \w+/))) return both(r[2], r[1]);
  if ((r = m.match(/^unsupported operand type\(s\) for [^:]+: '(\w+)' and '(\w+)'/))) return both(r[1], r[2]);
  if ((r = m.match(/^'[<>=!]+' not supported between instances of '(\w+)' and '(\w+)'/))) return both(r[1], r[2]);
  if ((r = m.match(/^sequence item \d+: expected str instance, (\w+) found/))) return [{ bad: 'list', want: ['list_str'] }];
  if ((r = m.match(/^(string|list|tuple) indices must be integers(?: or slices)?, not '?(\w+)'?/))) {
    const container = r[1] === 'string' ? 'str' : r[1];
    return [{ bad: container, want: ['dict'] }, { bad: r[2], want: ['int'] }];
  }
  if ((r = m.match(/^object of type '(\w+)' has no len\(\)/))) return [{ bad: r[1], want: SEQ }];
  if ((r = m.match(/^(?:argument of type )?'(\w+)' object is not (?:iterable|reversible)/))) return [{ bad: r[1], want: SEQ }];
  if ((r = m.match(/^argument of type '(\w+)' is not iterable/))) return [{ bad: r[1], want: SEQ }];
  if ((r = m.match(/^'(\w+)' object is not subscriptable/))) return [{ bad: r[1], want: [...SEQ, 'dict'] }];
  if ((r = m.match(/^'(\w+)' object does not support item assignment/))) return [{ bad: r[1], want: ['list_int', 'dict'] }];
  if ((r = m.match(/^'(\w+)' object is not callable/))) return [{ bad: r[1], want: ['fn1'] }];
  if ((r = m.match(/^'(\w+)' object cannot be interpreted as an integer/))) return [{ bad: r[1], want: ['int'] }];
  if ((r = m.match(/^can't multiply sequence by non-int of type '(\w+)'/))) return [{ bad: r[1], want: ['int'] }];
  if ((r = m.match(/^bad operand type for [^:]+: '(\w+)'/))) return [{ bad: r[1], want: ['int'] }];
  if ((r = m.match(/^expected string or bytes-like object, got '(\w+)'/))) return [{ bad: r[1], want: ['str'] }];
  if ((r = m.match(/expected string of length 1, but (\w+) found/))) return [{ bad: r[1], want: ['char'] }];
  if ((r = m.match(/^%\w format: an? (?:real number|integer) is required, not (\w+)/))) return [{ bad: r[1], want: ['int'] }];
  if ((r = m.match(/^unhashable type: '(\w+)'/))) return [{ bad: r[1], want: ['str', 'int'] }];
  if ((r = m.match(/^descriptor '\w+' for '(\w+)' objects doesn't apply to a '(\w+)' object/))) return [{ bad: r[2], want: PY_KINDS[r[1]] ?? [] }];
  // Anything else naming a type we draw: that type was wrong, the wanted one unknown.
  for (const q of m.matchAll(/'(\w+)'|\b(?:not|got) (\w+)\b/g)) {
    const t = q[1] ?? q[2];
    if (PY_KINDS[t]) return [{ bad: t, want: [] }];
  }
  return [];
}

/**
 * A dict argument with the missing key put in, for a call that ended in `KeyError: <key>`: code
 * that reads `d[key]` wants a dict that has it (the key passed in, or a literal in the body).
 */
function withMissingKey(args: string[], error: string, rng: Rng, h: FunctionHints): string[][] {
  const m = error.match(/^KeyError: ((['"]).*\2|-?\d+)$/);
  if (!m) return [];
  const value = () => drawKind(rng, rng.choice<Kind>(['int', 'str', 'list_int']), h);
  return args.flatMap((a, i) => {
    if (pyTypeOfArg(a) !== 'dict') return [];
    const inner = a.trim().slice(1, -1).trim();
    const next = [...args];
    next[i] = `{${m[1]}: ${value()}${inner ? `, ${inner}` : ''}}`;
    return [next];
  });
}

/**
 * New calls from a drawn call that failed on its input. A wrong-type message: for each reading
 * of it, the parameters whose argument has the wrong type are drawn again (of a wanted kind,
 * else of a fallback kind of another type). A `KeyError`: the dict arguments get the key.
 * Deterministic in `rng`; calls in `seen` are skipped.
 */
export function redrawCalls(h: FunctionHints, failed: { args: string[]; error: string }, rng: Rng, seen: Set<string>, max: number): Call[] {
  const out: Call[] = [];
  const add = (args: string[]) => {
    const input = args.join(', ');
    if (out.length >= max || input.length > 400 || seen.has(input)) return false;
    seen.add(input);
    out.push({ input, args });
    return true;
  };
  for (const args of withMissingKey(failed.args, failed.error, rng, h)) add(args);
  for (const { bad, want } of diagnoseWrongType(failed.error)) {
    const blamed = failed.args.map((a, i) => (pyTypeOfArg(a) === bad ? i : -1)).filter((i) => i >= 0);
    if (!blamed.length) continue;
    const badKinds = PY_KINDS[bad] ?? [];
    const kinds = want.length ? want : FALLBACK.filter((k) => !badKinds.includes(k));
    for (let tries = 0; tries < 4 && out.length < max; tries++) {
      const args = [...failed.args];
      for (const i of blamed) args[i] = drawKind(rng, rng.choice(kinds), h);
      if (add(args)) break;
    }
  }
  return out;
}

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

type Kind = Ty | 'float' | 'none' | 'set_int' | 'bytes' | 'char';

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
  return out;
}

function kindOfLiteral(lit: string): Kind | undefined {
  if (/^-?\d+$/.test(lit)) return 'int';
  if (/^-?\d+\.\d*(e-?\d+)?$/.test(lit)) return 'float';
  if (/^['"]/.test(lit)) return lit.length === 3 ? 'char' : 'str';
  if (lit === 'True' || lit === 'False') return 'bool';
  if (lit.startsWith('[')) return /^\[['"]/.test(lit) ? 'list_str' : 'list_int';
  if (lit.startsWith('{')) return 'dict';
  if (lit === 'None') return undefined;
  return undefined;
}

function drawKind(rng: Rng, kind: Kind, h: FunctionHints): string {
  switch (kind) {
    case 'float':
      return (randomInt(rng) / 4).toFixed(2);
    case 'none':
      return 'None';
    case 'set_int':
      return `{${Array.from({ length: rng.range(1, 5) }, () => String(randomInt(rng))).join(', ')}}`;
    case 'bytes':
      return `b${pyStr(randomStr(rng).replace(/[^\x20-\x7e]/g, ''))}`;
    case 'char':
      return pyStr(rng.choice([...'abcxyz019 -_.,']));
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
  // Mostly the best guess, now and then another, so a wrong guess still finds a working input.
  const kind = kinds.length && rng.bool(0.8) ? kinds[rng.bool(0.7) ? 0 : rng.int(kinds.length)] : rng.choice(FALLBACK);
  return drawKind(rng, kind, h);
}

/**
 * Up to `n` distinct argument strings: the corpus's own calls first, then draws. Optional
 * parameters are passed now and then (positionally, in order), else left to their defaults.
 */
export function candidateInputs(h: FunctionHints, n: number, rng: Rng): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (s: string) => {
    if (s.length <= 400 && !seen.has(s)) {
      seen.add(s);
      out.push(s);
    }
  };
  for (const s of [...h.doctests, ...h.callsites]) if (out.length < Math.ceil(n / 2)) add(s);
  for (let tries = 0; out.length < n && tries < n * 4; tries++) {
    let count = h.required;
    while (count < h.params.length && rng.bool(0.3)) count++;
    add(h.params.slice(0, count).map((p) => drawParam(rng, p, h)).join(', '));
  }
  return out;
}

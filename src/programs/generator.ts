import { Rng } from '../util/rng';
import { genStmt, type Planned } from './body';
import { generateClass } from './classes';
import type { GeneratorConfig } from './config';
import { constant, gen } from './exprs';
import { expr, histogram, PREC, printProgram, withDoubleQuotes, type ClassDef, type Construct, type FuncDef, type Stmt, type Ty } from './ir';
import { recursiveHelper } from './recursion';
import { FnState, Scope } from './scope';
import { entryName, ERROR_CLASS_NAMES, helperName, NAMES, randomLiteral } from './values';

/**
 * One synthetic CruxEval-style program: an entry function (`f`, or a varied name), a chain of
 * helpers it calls (f -> h1 -> h2 -> h3, every call unconditional so the planned depth is reached), optionally a
 * bounded recursive helper, a class, and a helper that raises on some inputs (caught by an
 * ancestor or not). The program is a pure function of (seed, index, config).
 */
export interface GeneratedProgram {
  /** `gen-<seed>-<index>`; its records are `gen-<seed>-<index>-<k>`. */
  id: string;
  code: string;
  /** The entry function's name (`f` unless the config varies it). */
  entry: string;
  /** Argument texts of the entry call, distinct. */
  inputs: string[];
  histogram: Partial<Record<Construct, number>>;
  /** Planned call depth: 1 = f alone, 2 = f calls a helper, ... (recursion not counted). */
  plannedDepth: number;
  /** `Type: message` of the raises that may escape f: the only errors a run may end with. */
  plannedErrors: string[];
}

const PARAM_TYPES: Ty[] = ['list_int', 'str', 'int', 'list_str', 'dict', 'bool', 'opt_int', 'tuple', 'matrix'];
const PARAM_WEIGHTS = [3, 3, 2.5, 1.5, 1.5, 0.6, 0.7, 0.6, 0.6];
const HELPER_PARAM_TYPES: Ty[] = ['list_int', 'str', 'int', 'list_str', 'dict'];
const RET_TYPES: Ty[] = ['int', 'str', 'bool', 'list_int', 'list_str', 'dict', 'tuple'];
const RET_WEIGHTS = [3, 2.5, 1, 2.5, 1, 1, 0.5];
const MESSAGES = ['negative value', 'empty input', 'too many items', 'invalid text', 'limit reached', 'bad key', 'unexpected value', 'value out of range'];
const BUILTINS = ['len', 'sum', 'max', 'min', 'abs', 'int', 'str', 'list', 'dict', 'sorted', 'range', 'enumerate', 'zip', 'tuple', 'divmod', 'all', 'any', 'f', 'self', 'main', 'print', 'set', 'type', 'id', 'input', 'map', 'filter', 'next', 'iter', 'ord', 'chr', 'bool', 'round', 'pow', 'hash', 'object', 'format', 'reversed', 'vars', 'dir', 'open', 'exit', 'quit', 'rest', 'half'];

interface Signature {
  name: string;
  params: Ty[];
  ret: Ty;
}

export function generateProgram(seed: number, index: number, cfg: GeneratorConfig): GeneratedProgram {
  const rng = Rng.from(seed, 'program', index);
  const taken = new Set<string>(BUILTINS);
  // Its own stream, so `entryNames: f` programs stay exactly what they were before names varied.
  const entry = cfg.entryNames === 'f' ? 'f' : entryName(Rng.from(seed, 'program-entry', index), taken);
  taken.add(entry);
  const names = Rng.from(seed, 'program-names', index);
  let depth = 1 + rng.weighted(cfg.callDepthWeights);
  const raises = rng.bool(cfg.raisingHelper);
  if (raises && depth < 2) depth = 2;
  const caught = raises && !rng.bool(cfg.uncaughtShare);
  const classes: ClassDef[] = [];
  const funcs: FuncDef[] = [];

  // Exception to raise, possibly a custom class.
  let excName = '';
  let message = '';
  if (raises) {
    message = rng.choice(MESSAGES);
    const r = rng.next();
    if (r < 0.3) {
      excName = rng.choice(ERROR_CLASS_NAMES);
      taken.add(excName);
      classes.push({ name: excName, base: 'Exception', methods: [] });
    } else excName = r < 0.75 ? 'ValueError' : 'RuntimeError';
  }
  const raiser = raises ? rng.range(1, depth - 1) : -1;
  const catcher = caught ? rng.range(0, raiser - 1) : -1;
  const recursionAt = rng.bool(cfg.recursion) ? rng.range(0, depth - 1) : -1;
  const cls = rng.bool(cfg.classes) ? generateClass(rng, cfg, taken) : undefined;
  if (cls) classes.push(cls.def);

  // Build the chain deepest-first so each caller knows its callee's signature.
  const chainNames: string[] = [];
  for (let i = 1; i < depth; i++) {
    const n = helperName(rng, taken);
    taken.add(n);
    chainNames.push(n);
  }
  let callee: Signature | undefined;
  const defs: FuncDef[] = [];
  for (let level = depth - 1; level >= 0; level--) {
    const isEntry = level === 0;
    const name = isEntry ? entry : chainNames[level - 1];
    const paramTys = isEntry ? pickParams(rng, cfg) : Array.from({ length: rng.range(1, 2) }, () => rng.choice(HELPER_PARAM_TYPES));
    const retTy = RET_TYPES[rng.weighted(RET_WEIGHTS)];
    const planned: Planned[] = [];
    if (callee) planned.push(callSite(callee, level === catcher ? { exc: excName } : undefined));
    if (level === raiser) planned.push(raiseSite(excName, message, caught));
    if (level === recursionAt) {
      const rec = recursiveHelper(rng, taken);
      defs.push(rec.def);
      planned.push((s) => {
        const r = s.fn.fresh(NAMES[rec.ret]);
        const call = expr(`${rec.def.name}(${rec.args(s)})`, rec.ret, PREC.atom, 'helper_call');
        s.add(r, rec.ret);
        return [{ k: 'assign', target: r, value: call }];
      });
    }
    if (isEntry && cls) planned.push(cls.use);
    const def = genFunction(rng, names, cfg, taken, name, paramTys, retTy, planned, isEntry ? (cfg.wideParams ?? cfg.wideNames) : cfg.wideNames);
    if (!isEntry) def.tags.push('helper');
    defs.push(def);
    callee = { name, params: paramTys, ret: retTy };
  }
  funcs.push(...defs);
  const ir = { classes, funcs };
  const code = printProgram(ir);

  const params = callee!.params;
  const nInputs = rng.range(cfg.inputs.min, cfg.inputs.max);
  const inputs: string[] = [];
  // Its own stream, like the quotes below: 0 keeps the inputs as they were.
  const strings = { wide: cfg.wideStrings > 0 ? { rng: Rng.from(seed, 'program-strings', index), share: cfg.wideStrings } : undefined };
  for (let k = 0; k < nInputs * 3 && inputs.length < nInputs; k++) {
    const text = params.map((t) => randomLiteral(rng, t, strings)).join(', ');
    if (!inputs.includes(text)) inputs.push(text);
  }
  const plannedErrors = raises && !caught ? [`${excName}: ${message}`] : [];
  // Its own stream too: the quoting changes no other choice, and 0 keeps programs as they were.
  const quote = Rng.from(seed, 'program-quotes', index).bool(cfg.doubleQuotes) ? withDoubleQuotes : (text: string) => text;
  return { id: `gen-${seed}-${index}`, code: quote(code), entry, inputs: inputs.map(quote), histogram: histogram(ir), plannedDepth: depth, plannedErrors };
}

function pickParams(rng: Rng, cfg: GeneratorConfig): Ty[] {
  const n = rng.range(cfg.params.min, Math.max(cfg.params.min, cfg.params.max));
  return Array.from({ length: Math.max(1, n) }, () => PARAM_TYPES[rng.weighted(PARAM_WEIGHTS)]);
}

/** `wideParams`: the share of wide names among this function's parameters. */
function genFunction(rng: Rng, names: Rng, cfg: GeneratorConfig, taken: Set<string>, name: string, paramTys: Ty[], retTy: Ty, planned: Planned[], wideParams: number): FuncDef {
  const fn = new FnState(rng, cfg, taken, retTy, false, names);
  const scope = new Scope(fn);
  const params = paramTys.map((ty) => fn.fresh(NAMES[ty], wideParams));
  const body: Stmt[] = [];
  paramTys.forEach((ty, i) => {
    if (ty !== 'opt_int') return scope.add(params[i], ty);
    // `None` inputs: the CruxEval idiom of a defaulted argument.
    const cond = expr(`${params[i]} is None`, 'bool', PREC.cmp, 'none_check');
    const fix: Stmt = rng.bool(0.6) ? { k: 'assign', target: params[i], value: constant(scope, 'int') } : { k: 'return', value: retTy.startsWith('obj:') ? constant(scope, 'int') : constant(scope, retTy), early: true };
    body.push({ k: 'if', branches: [{ cond, body: [fix] }] });
    scope.add(params[i], 'int');
  });
  const n = rng.range(cfg.statements.min, cfg.statements.max);
  const slots = planned.map(() => rng.range(0, n));
  const lastSlot = Math.max(-1, ...slots);
  for (let i = 0; i <= n; i++) {
    fn.allowEarlyReturn = i >= lastSlot;
    planned.forEach((p, j) => {
      if (slots[j] === i) body.push(...p(scope));
    });
    if (i < n) body.push(...genStmt(scope));
  }
  body.push({ k: 'return', value: gen(scope, retTy, cfg.exprDepth), early: false });
  return { name, params, body, tags: [] };
}

/** `res = callee(args)`, inside try/except when this level catches the chain's exception. */
function callSite(callee: Signature, handler?: { exc: string }): Planned {
  return (s) => {
    const args = callee.params.map((t) => gen(s, t, 1).code).join(', ');
    const r = s.fn.fresh(NAMES[callee.ret]);
    const call = expr(`${callee.name}(${args})`, callee.ret, PREC.atom, 'helper_call');
    const stmt: Stmt = { k: 'assign', target: r, value: call };
    s.add(r, callee.ret);
    if (!handler) return [stmt];
    const fallback: Stmt = { k: 'assign', target: r, value: constant(s, callee.ret) };
    return [{ k: 'try', body: [stmt], handlers: [{ exc: handler.exc, body: [fallback] }] }];
  };
}

/**
 * `if COND: raise EXC(message)`. COND tests a variable with a predicate that holds for a fair
 * share of random inputs (about a third to a half), so uncaught raises end a useful number
 * of runs with status error instead of never firing.
 */
function raiseSite(exc: string, message: string, caught: boolean): Planned {
  return (s) => {
    const rng = s.fn.rng;
    const forms: Record<string, string[]> = {
      int: ['X < 0', 'X % 3 == 0', 'X > 20', 'X == 0 or X > 25'],
      str: ['not X', 'len(X) > 6', "'a' in X", 'X.isdigit()', "' ' in X"],
      list_int: ['len(X) > 5', 'not X', 'sum(X) > 60', 'len(X) < 3'],
      list_str: ['len(X) > 4', 'not X', 'len(X) < 2'],
      dict: ['len(X) > 2', 'not X', "'a' in X"],
    };
    const vars = s.all().filter((x) => forms[x.ty] && !x.name.includes('.'));
    const cond = vars.length
      ? (() => {
          const x = rng.choice(vars);
          return expr(rng.choice(forms[x.ty]).replace(/X/g, x.name), 'bool', PREC.or);
        })()
      : gen(s, 'bool', 1);
    return [{ k: 'if', branches: [{ cond, body: [{ k: 'raise', exc, message, caught }] }] }];
  };
}

// Over 300 lines on purpose: one statement production per function, all under the same Scope
// rules, read side by side when tuning what the generator makes (docs/programs.md).
import { constant, gen, strKey } from './exprs';
import { expr, isName, PREC, pyStr, wrap, type Expr, type Stmt, type Ty } from './ir';
import { Scope } from './scope';
import { stringLoop } from './string_loops';
import { CHAR_CONSTS, LOOP_NAMES, NAMES } from './values';

/**
 * Statement generation for function bodies. Loops are bounded by construction: `for` iterates
 * a container that its body may not mutate (frozen), `while` loops are one of three counted
 * templates whose counter the body may not touch, and nothing inside a loop can grow a value
 * geometrically (string/list updates there append small pieces only).
 */
const VALUE_TYPES: Ty[] = ['int', 'str', 'bool', 'list_int', 'list_str', 'dict', 'tuple'];
const VALUE_WEIGHTS = [4, 3, 1.2, 2.5, 1.5, 1.5, 0.6];

/** A statement planned by the program assembler (a helper call, an object's use...). */
export type Planned = (s: Scope) => Stmt[];

export function genBlock(s: Scope, n: number): Stmt[] {
  const out: Stmt[] = [];
  for (let i = 0; i < n; i++) out.push(...genStmt(s));
  return out;
}

function blockSize(s: Scope): number {
  const r = s.fn.cfg.blockStatements;
  return s.fn.rng.range(r.min, r.max);
}

export function genStmt(s: Scope): Stmt[] {
  const { rng, cfg } = s.fn;
  const m = cfg.mix;
  const canNest = s.level < cfg.nesting;
  const kinds: Array<[number, () => Stmt[] | null]> = [
    [m.assign, () => assignNew(s)],
    [m.update, () => update(s)],
    [m.list_mutation, () => listMutation(s)],
    [m.dict_mutation, () => dictMutation(s)],
    [canNest ? m.if : 0, () => ifStmt(s)],
    [canNest ? m.for : 0, () => forStmt(s)],
    [canNest ? m.while : 0, () => whileStmt(s)],
    [s.fn.allowEarlyReturn ? m.early_return : 0, () => earlyReturn(s)],
    [canNest ? m.try : 0, () => tryStmt(s)],
    [s.loop !== 'none' ? m.break_continue * 2 : 0, () => breakContinue(s)],
  ];
  const weights = kinds.map(([w]) => w);
  for (let attempt = 0; attempt < 8; attempt++) {
    const r = kinds[rng.weighted(weights)][1]();
    if (r) return r;
  }
  return assignNew(s);
}

function depth(s: Scope): number {
  return s.fn.cfg.exprDepth;
}

/** A bare variable of a mutable type would alias; copy it the way CruxEval code does. */
function unalias(e: Expr, s: Scope): Expr {
  if (!/^[A-Za-z_][\w.]*$/.test(e.code)) return e;
  if (e.ty === 'list_int' || e.ty === 'list_str') return expr(s.fn.rng.bool() ? `${e.code}[:]` : `list(${e.code})`, e.ty, PREC.atom, e.tags, 'slice');
  if (e.ty === 'dict') return expr(s.fn.rng.bool() ? `${e.code}.copy()` : `dict(${e.code})`, e.ty, PREC.atom, e.tags);
  return e;
}

function assignNew(s: Scope): Stmt[] {
  const rng = s.fn.rng;
  const ty = VALUE_TYPES[rng.weighted(VALUE_WEIGHTS)];
  if (ty === 'int' && rng.bool(0.08)) {
    const a = s.fn.fresh(['q', 'quot', 'whole']);
    const b = s.fn.fresh(['r', 'rem', 'rest']);
    const value = expr(`divmod(${gen(s, 'int', 1).code}, ${rng.range(2, 9)})`, 'tuple', PREC.atom);
    s.add(a, 'int');
    s.add(b, 'int');
    return [{ k: 'assign', target: `${a}, ${b}`, value, tags: ['tuple_unpack'] }];
  }
  const value = unalias(gen(s, ty, depth(s)), s);
  const name = s.fn.fresh(NAMES[ty]);
  s.add(name, ty);
  return [{ k: 'assign', target: name, value }];
}

function smallStr(s: Scope): Expr {
  const rng = s.fn.rng;
  const loopVar = s.all().find((x) => x.ty === 'str' && s.isFrozen(x.name));
  const r = rng.int(4);
  if (r === 0 && loopVar) return expr(loopVar.name, 'str', PREC.atom);
  if (r === 1) {
    const i = s.pick('int');
    if (i) return expr(`str(${i.name})`, 'str', PREC.atom);
  }
  if (r === 2 && loopVar) return expr(`${loopVar.name}.${rng.choice(['upper', 'lower', 'swapcase'])}()`, 'str', PREC.atom, 'str_method');
  return expr(pyStr(rng.choice(CHAR_CONSTS)), 'str', PREC.atom);
}

function update(s: Scope): Stmt[] | null {
  const rng = s.fn.rng;
  const ty = rng.choice(['int', 'int', 'str', 'str', 'bool', 'list_int', 'list_str', 'dict', 'tuple'] as Ty[]);
  const target = s.pick(ty, { writable: true });
  if (!target) return null;
  const t = target.name;
  const growing = s.loopDepth > 0 || s.fn.repeated;
  switch (ty) {
    case 'int': {
      const op = rng.choice(['+', '+', '-', '*', '//', '%']);
      if (op === '*' || op === '//' || op === '%') return [{ k: 'aug', target: t, op, value: expr(String(rng.range(2, 4)), 'int', PREC.atom) }];
      return [{ k: 'aug', target: t, op, value: gen(s, 'int', 1) }];
    }
    case 'str': {
      if (rng.bool(0.5)) return [{ k: 'aug', target: t, op: '+', value: growing ? smallStr(s) : gen(s, 'str', 1) }];
      const form = rng.choice(['upper()', 'lower()', 'strip()', '[::-1]', '[1:]', '[:-1]', 'title()', 'replace']);
      if (form === 'replace') {
        const [a, b] = [rng.choice('aeiou xz'.split('')), rng.choice('*-_#AEX'.split(''))];
        return [{ k: 'assign', target: t, value: expr(`${t}.replace(${pyStr(a)}, ${pyStr(b)})`, 'str', PREC.atom, 'str_method') }];
      }
      const isSlice = form.startsWith('[');
      return [{ k: 'assign', target: t, value: expr(`${t}${isSlice ? '' : '.'}${form}`, 'str', PREC.atom, isSlice ? 'slice' : 'str_method') }];
    }
    case 'list_int':
    case 'list_str': {
      const form = rng.int(4);
      if (form === 0) return [{ k: 'assign', target: t, value: expr(`sorted(${t})`, ty, PREC.atom) }];
      if (form === 1) return [{ k: 'assign', target: t, value: expr(`${t}[${rng.choice(['::-1', '1:', ':-1', '::2'])}]`, ty, PREC.atom, 'slice') }];
      if (form === 2 && !growing) return [{ k: 'assign', target: t, value: gen(s, ty, depth(s)) }];
      if (ty === 'list_int') return [{ k: 'assign', target: t, value: expr(`[x ${rng.choice(['+', '-', '%'])} ${rng.range(1, 5)} for x in ${t}]`, ty, PREC.atom, 'listcomp') }];
      return [{ k: 'assign', target: t, value: expr(`[w.${rng.choice(['upper', 'lower', 'strip', 'title'])}() for w in ${t}]`, ty, PREC.atom, 'listcomp', 'str_method') }];
    }
    default:
      return [{ k: 'assign', target: t, value: gen(s, ty, depth(s)) }];
  }
}

function listMutation(s: Scope): Stmt[] | null {
  const rng = s.fn.rng;
  const ty: Ty = rng.bool(0.65) ? 'list_int' : 'list_str';
  const item: Ty = ty === 'list_int' ? 'int' : 'str';
  const target = s.pick(ty, { writable: true });
  if (!target) return null;
  const t = target.name;
  const call = (code: string): Stmt => ({ k: 'expr', value: expr(code, 'int', PREC.atom, 'list_method') });
  const growing = s.loopDepth > 0 || s.fn.repeated;
  // Inside a loop an appended string must be small: `words.append(''.join(words))` doubles
  // the list's total size every iteration.
  const element = () => (growing && item === 'str' ? smallStr(s) : gen(s, item, 1));
  switch (rng.int(8)) {
    case 0:
    case 1:
      return [call(`${t}.append(${element().code})`)];
    case 2: {
      const other = growing ? expr(`[${gen(s, item, 0).code}, ${gen(s, item, 0).code}]`, ty, PREC.atom) : gen(s, ty, 1);
      if (new RegExp(`\\b${t.replace('.', '\\.')}\\b`).test(other.code)) return null;
      return [call(`${t}.extend(${other.code})`)];
    }
    case 3:
      return [call(`${t}.insert(${rng.choice(['0', '1', `len(${t}) // 2`])}, ${element().code})`)];
    case 4:
      return [{ k: 'if', branches: [{ cond: expr(t, 'bool', PREC.atom), body: [call(`${t}.pop(${rng.choice(['', '0', '-1'])})`)] }] }];
    case 5: {
      const x = gen(s, item, 0);
      return [{ k: 'if', branches: [{ cond: expr(`${wrap(x, PREC.add)} in ${t}`, 'bool', PREC.cmp), body: [call(`${t}.remove(${x.code})`)] }] }];
    }
    case 6:
      return [call(`${t}.sort(${rng.bool(0.3) ? 'reverse=True' : ''})`)];
    default:
      return [call(`${t}.reverse()`)];
  }
}

function dictMutation(s: Scope): Stmt[] | null {
  const rng = s.fn.rng;
  const target = s.pick('dict', { writable: true });
  if (!target) return null;
  const d = target.name;
  const key = strKey(s, 1);
  const call = (code: string): Stmt => ({ k: 'expr', value: expr(code, 'int', PREC.atom, 'dict_method') });
  switch (rng.int(6)) {
    case 0:
      return [{ k: 'assign', target: `${d}[${key}]`, value: gen(s, 'int', 1), tags: ['index'] }];
    case 1:
      return [{ k: 'assign', target: `${d}[${key}]`, value: expr(`${d}.get(${key}, 0) + ${rng.range(1, 3)}`, 'int', PREC.add, 'dict_method'), tags: ['index'] }];
    case 2:
      return [call(`${d}.pop(${key}, None)`)];
    case 3:
      return [call(`${d}.update({${key}: ${gen(s, 'int', 1).code}})`)];
    case 4:
      return [call(`${d}.setdefault(${key}, ${gen(s, 'int', 0).code})`)];
    default:
      return [{ k: 'if', branches: [{ cond: expr(`${key} in ${d}`, 'bool', PREC.cmp), body: [{ k: 'assign', target: `${d}[${key}]`, value: expr(`${d}[${key}] * ${rng.range(2, 3)}`, 'int', PREC.mul, 'index'), tags: ['index'] }] }] }];
  }
}

function ifStmt(s: Scope): Stmt[] {
  const rng = s.fn.rng;
  const branches = [{ cond: gen(s, 'bool', depth(s)), body: genBlock(s.child(), blockSize(s)) }];
  if (rng.bool(0.25)) branches.push({ cond: gen(s, 'bool', depth(s)), body: genBlock(s.child(), blockSize(s)) });
  const orelse = rng.bool(0.4) ? genBlock(s.child(), blockSize(s)) : undefined;
  return [{ k: 'if', branches, orelse }];
}

function forStmt(s: Scope): Stmt[] | null {
  const rng = s.fn.rng;
  // Drawn only when asked for, so a config without string loops makes the programs it made.
  if (s.fn.cfg.stringLoops > 0 && rng.bool(s.fn.cfg.stringLoops)) return stringLoop(s, (body, short) => genBlock(body, short ? rng.range(0, 1) : blockSize(s)));
  const body = s.child('for');
  const nested = s.loopDepth > 0;
  const fresh = (pool: string[], ty: Ty) => {
    const n = s.fn.fresh(pool);
    body.add(n, ty);
    body.freeze(n);
    return n;
  };
  const freezeIfName = (e: Expr) => {
    if (isName(e.code)) body.freeze(e.code);
  };
  let target: string;
  let iter: Expr;
  switch (rng.int(8)) {
    case 0:
    case 1: {
      iter = gen(s, 'list_int', 1);
      freezeIfName(iter);
      target = fresh(LOOP_NAMES.int, 'int');
      break;
    }
    case 2: {
      iter = gen(s, rng.bool() ? 'str' : 'list_str', 1);
      freezeIfName(iter);
      target = fresh(LOOP_NAMES.str, 'str');
      break;
    }
    case 3: {
      const seq = s.pick(rng.bool(0.7) ? 'list_int' : 'str');
      if (!seq) return null;
      body.freeze(seq.name);
      iter = expr(`range(len(${seq.name}))`, 'list_int', PREC.atom);
      target = fresh(LOOP_NAMES.index, 'int');
      body.pair(target, seq.name);
      break;
    }
    case 4: {
      const seq = s.pick('list_int');
      if (!seq) return null;
      body.freeze(seq.name);
      const i = fresh(LOOP_NAMES.index, 'int');
      const x = fresh(LOOP_NAMES.int, 'int');
      body.pair(i, seq.name);
      iter = expr(`enumerate(${seq.name})`, 'list_int', PREC.atom, 'tuple_unpack');
      target = `${i}, ${x}`;
      break;
    }
    case 5: {
      const d = s.pick('dict');
      if (!d) return null;
      body.freeze(d.name);
      const kk = fresh(LOOP_NAMES.key, 'str');
      const vv = fresh(['v', 'val', 'amount', 'qty'], 'int');
      iter = expr(`${d.name}.items()`, 'list_int', PREC.atom, 'dict_method', 'tuple_unpack');
      target = `${kk}, ${vv}`;
      break;
    }
    case 6: {
      const m = s.pick('matrix');
      if (m) {
        body.freeze(m.name);
        iter = expr(m.name, 'matrix', PREC.atom);
        target = fresh(LOOP_NAMES.list_int, 'list_int');
        break;
      }
      iter = expr(`range(${rng.range(1, 5)}, ${rng.range(5, 9)})`, 'list_int', PREC.atom);
      target = fresh(LOOP_NAMES.int, 'int');
      break;
    }
    default: {
      iter = rng.bool() ? expr(`range(${rng.range(2, 6)})`, 'list_int', PREC.atom) : expr(`range(${wrap(gen(s, 'int', 1), PREC.mul)} % ${rng.range(3, 7)})`, 'list_int', PREC.atom);
      target = fresh(LOOP_NAMES.int, 'int');
    }
  }
  return [{ k: 'for', target, iter, body: genBlock(body, blockSize(s)), nested }];
}

function whileStmt(s: Scope): Stmt[] | null {
  const rng = s.fn.rng;
  const body = s.child('while');
  const nested = s.loopDepth > 0;
  const form = rng.int(3);
  if (form === 0) {
    const i = s.fn.fresh(LOOP_NAMES.index);
    const seq = s.pick(rng.bool() ? 'list_int' : 'str');
    let bound: string;
    if (seq && rng.bool(0.7)) {
      bound = `len(${seq.name})`;
      body.freeze(seq.name);
      body.pair(i, seq.name);
    } else bound = String(rng.range(2, 6));
    s.add(i, 'int');
    body.freeze(i);
    const stmts = genBlock(body, blockSize(s));
    stmts.push({ k: 'aug', target: i, op: '+', value: expr('1', 'int', PREC.atom) });
    return [
      { k: 'assign', target: i, value: expr('0', 'int', PREC.atom) },
      { k: 'while', cond: expr(`${i} < ${bound}`, 'bool', PREC.cmp), body: stmts, nested },
    ];
  }
  if (form === 1) {
    const m = s.fn.fresh(['m', 'remaining', 'steps', 'left']);
    const init = expr(`abs(${gen(s, 'int', 1).code}) % ${rng.range(8, 20)}`, 'int', PREC.mul);
    s.add(m, 'int');
    body.freeze(m);
    const stmts = genBlock(body, blockSize(s));
    stmts.push(rng.bool() ? { k: 'aug', target: m, op: '//', value: expr('2', 'int', PREC.atom) } : { k: 'aug', target: m, op: '-', value: expr(String(rng.range(1, 3)), 'int', PREC.atom) });
    return [
      { k: 'assign', target: m, value: init },
      { k: 'while', cond: expr(`${m} > 0`, 'bool', PREC.cmp), body: stmts, nested },
    ];
  }
  const src = s.pick('list_int');
  if (!src) return null;
  const stack = s.fn.fresh(['stack', 'queue', 'pending', 'todo']);
  s.add(stack, 'list_int');
  body.freeze(stack);
  const item = s.fn.fresh(LOOP_NAMES.int);
  body.add(item, 'int');
  const pop: Stmt = { k: 'assign', target: item, value: expr(`${stack}.pop(${rng.bool() ? '' : '0'})`, 'int', PREC.atom, 'list_method') };
  return [
    { k: 'assign', target: stack, value: expr(rng.bool() ? `list(${src.name})` : `${src.name}[:]`, 'list_int', PREC.atom) },
    { k: 'while', cond: expr(stack, 'bool', PREC.atom), body: [pop, ...genBlock(body, blockSize(s))], nested },
  ];
}

function earlyReturn(s: Scope): Stmt[] {
  const value = s.fn.ret.startsWith('obj:') ? constant(s, 'int') : gen(s, s.fn.ret, 1);
  return [{ k: 'if', branches: [{ cond: gen(s, 'bool', depth(s)), body: [{ k: 'return', value, early: true }] }] }];
}

function breakContinue(s: Scope): Stmt[] | null {
  const kind = s.loop === 'for' && s.fn.rng.bool(0.5) ? 'continue' : 'break';
  if (s.loop === 'none') return null;
  return [{ k: 'if', branches: [{ cond: gen(s, 'bool', depth(s)), body: [{ k: kind }] }] }];
}

/** A risky operation inside try with the matching handler: the exceptions a debugger sees caught. */
function tryStmt(s: Scope): Stmt[] | null {
  const rng = s.fn.rng;
  const name = s.fn.fresh(NAMES.int);
  let risky: Expr;
  let exc: string;
  let fallback: Expr = expr(String(rng.range(-1, 1)), 'int', PREC.atom);
  switch (rng.int(5)) {
    case 0: {
      const x = gen(s, 'str', 1);
      risky = expr(`int(${x.code})`, 'int', PREC.atom);
      exc = 'ValueError';
      break;
    }
    case 1: {
      const d = s.pick('dict');
      if (!d) return null;
      risky = expr(`${d.name}[${strKey(s, 1)}]`, 'int', PREC.atom, 'index');
      exc = 'KeyError';
      break;
    }
    case 2: {
      const b = s.pick('int');
      if (!b) return null;
      risky = expr(`${wrap(gen(s, 'int', 1), PREC.mul)} // ${rng.bool() ? b.name : `(${b.name} - ${rng.range(1, 4)})`}`, 'int', PREC.mul);
      exc = 'ZeroDivisionError';
      fallback = expr('0', 'int', PREC.atom);
      break;
    }
    case 3: {
      const l = s.pick('list_int');
      if (!l) return null;
      risky = expr(`${l.name}[${gen(s, 'int', 1).code}]`, 'int', PREC.atom, 'index');
      exc = 'IndexError';
      break;
    }
    default: {
      const l = s.pick(rng.bool() ? 'list_int' : 'str');
      if (!l) return null;
      const needle = l.ty === 'str' ? pyStr(rng.choice(CHAR_CONSTS)) : gen(s, 'int', 0).code;
      risky = expr(`${l.name}.index(${needle})`, 'int', PREC.atom, l.ty === 'str' ? 'str_method' : 'list_method');
      exc = 'ValueError';
    }
  }
  const inner = s.child();
  const tryBody: Stmt[] = [{ k: 'assign', target: name, value: risky }];
  if (rng.bool(0.3)) tryBody.push(...genBlock(inner, 1));
  const stmts: Stmt[] = [{ k: 'try', body: tryBody, handlers: [{ exc, body: [{ k: 'assign', target: name, value: fallback }] }] }];
  s.add(name, 'int');
  return stmts;
}

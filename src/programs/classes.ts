import { Rng } from '../util/rng';
import { genBlock } from './body';
import type { GeneratorConfig } from './config';
import { constant, gen } from './exprs';
import { expr, PREC, type ClassDef, type FuncDef, type Stmt, type Ty } from './ir';
import { FnState, Scope } from './scope';
import { CLASS_NAMES, LOOP_NAMES, METHOD_NAMES, NAMES } from './values';

/**
 * A small class (an __init__ that stores copies of its arguments plus default attributes, and
 * one or two methods whose bodies are generated like any function's) and the statements that
 * use it from `f`: construction, method calls (sometimes one per item of a list), attribute
 * reads afterwards.
 */
export interface GeneratedClass {
  def: ClassDef;
  /** Statements for the caller: builds an instance and calls its methods. */
  use: (s: Scope) => Stmt[];
}

const ATTR_NAMES: Record<string, string[]> = {
  int: ['total', 'count', 'size', 'limit', 'score', 'level'],
  str: ['name', 'label', 'text', 'prefix', 'log'],
  list_int: ['items', 'values', 'history', 'stack', 'data'],
  dict: ['counts', 'table', 'index', 'stock'],
};

export function generateClass(rng: Rng, cfg: GeneratorConfig, taken: Set<string>): GeneratedClass {
  const name = rng.choice(CLASS_NAMES.filter((n) => !taken.has(n)));
  taken.add(name);
  const attrTypes = rng.shuffle(['int', 'str', 'list_int', 'dict'] as Ty[]).slice(0, rng.range(1, 3));
  const attrs = attrTypes.map((ty) => ({ name: rng.choice(ATTR_NAMES[ty]), ty }));
  const initParams = attrs.filter(() => rng.bool(0.6));
  const initBody: Stmt[] = attrs.map((a) => {
    const fromParam = initParams.includes(a);
    const code = fromParam ? (a.ty === 'list_int' ? `list(${a.name})` : a.ty === 'dict' ? `dict(${a.name})` : a.name) : constant(new Scope(new FnState(rng, cfg, [], a.ty)), a.ty).code;
    return { k: 'assign', target: `self.${a.name}`, value: expr(code, a.ty, PREC.atom) };
  });
  const init: FuncDef = { name: '__init__', params: ['self', ...initParams.map((a) => a.name)], body: initBody, tags: ['method'] };

  const methods: Array<{ name: string; param?: Ty; ret: Ty }> = [];
  const defs: FuncDef[] = [init];
  const nMethods = rng.range(1, 2);
  const methodNames = rng.shuffle(METHOD_NAMES.filter((m) => !attrs.some((a) => a.name === m)));
  for (let i = 0; i < nMethods; i++) {
    const param: Ty | undefined = rng.bool(0.75) ? rng.choice(['int', 'int', 'str'] as Ty[]) : undefined;
    const retTy = rng.choice(['int', 'str', 'bool', 'list_int'] as Ty[]);
    const fn = new FnState(rng, cfg, [...taken, 'self'], retTy, true);
    const scope = new Scope(fn);
    for (const a of attrs) scope.add(`self.${a.name}`, a.ty);
    const params = ['self'];
    if (param) {
      const p = fn.fresh(param === 'int' ? ['amount', 'value', 'x', 'n', 'delta'] : ['word', 'label', 'token', 'entry']);
      scope.add(p, param);
      params.push(p);
    }
    const body = genBlock(scope, rng.range(1, 3));
    body.push({ k: 'return', value: gen(scope, retTy, cfg.exprDepth), early: false });
    const mname = methodNames[i];
    defs.push({ name: mname, params, body, tags: ['method'] });
    methods.push({ name: mname, param, ret: retTy });
  }
  const def: ClassDef = { name, methods: defs };

  const use = (s: Scope): Stmt[] => {
    const obj = s.fn.fresh([name.toLowerCase(), 'obj', 'box', 'store', 'tracker']);
    const args = initParams.map((a) => gen(s, a.ty, 1).code).join(', ');
    const out: Stmt[] = [{ k: 'assign', target: obj, value: expr(`${name}(${args})`, `obj:${name}`, PREC.atom, 'method_call') }];
    s.add(obj, `obj:${name}`);
    s.freeze(obj);
    for (const m of methods) {
      const call = (argCode: string) => expr(`${obj}.${m.name}(${argCode})`, m.ret, PREC.atom, 'method_call');
      const list = m.param === 'int' ? s.pick('list_int') : m.param === 'str' ? s.pick(rng.bool() ? 'list_str' : 'str') : undefined;
      if (list && rng.bool(0.6)) {
        const body = s.child('for');
        body.freeze(list.name);
        const x = s.fn.fresh(m.param === 'int' ? LOOP_NAMES.int : LOOP_NAMES.str);
        body.add(x, m.param!);
        out.push({ k: 'for', target: x, iter: expr(list.name, list.ty, PREC.atom), body: [{ k: 'expr', value: call(x) }], nested: false });
      } else if (rng.bool(0.5)) {
        const r = s.fn.fresh(NAMES[m.ret]);
        out.push({ k: 'assign', target: r, value: call(m.param ? gen(s, m.param, 1).code : '') });
        s.add(r, m.ret);
      } else {
        out.push({ k: 'expr', value: call(m.param ? gen(s, m.param, 1).code : '') });
      }
    }
    for (const a of attrs) s.add(`${obj}.${a.name}`, a.ty);
    return out;
  };
  return { def, use };
}

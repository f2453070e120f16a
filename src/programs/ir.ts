/**
 * The generator's intermediate representation and its printer. Statements are a small tree;
 * expressions are typed terms already rendered to text, each carrying the constructs it used, so
 * the construct histogram of a program is an exact count over its IR (never a regex over code).
 */

/** Python value types the generator tracks. `obj:Name` is an instance of a generated class. */
export type Ty = 'int' | 'str' | 'bool' | 'list_int' | 'list_str' | 'dict' | 'tuple' | 'matrix' | 'opt_int' | `obj:${string}`;

/** Everything the histogram counts. */
export const CONSTRUCTS = [
  'assign',
  'augassign',
  'if',
  'elif',
  'else',
  'for',
  'while',
  'nested_loop',
  'break',
  'continue',
  'early_return',
  'try',
  'raise',
  'raise_caught',
  'raise_uncaught',
  'helper',
  'helper_call',
  'recursion',
  'class',
  'method',
  'method_call',
  'listcomp',
  'dictcomp',
  'genexp',
  'slice',
  'index',
  'str_method',
  'list_method',
  'dict_method',
  'ifexp',
  'fstring',
  'bool_op',
  'none_check',
  'tuple_unpack',
] as const;
export type Construct = (typeof CONSTRUCTS)[number];

/** Operator precedence of a rendered expression (higher binds tighter). */
export const PREC = { ifexp: 10, or: 20, and: 30, not: 40, cmp: 50, add: 70, mul: 80, unary: 90, atom: 100 } as const;

/** A plain name or attribute chain (`xs`, `self.items`): what a loop may freeze. */
export function isName(code: string): boolean {
  return /^[A-Za-z_][\w.]*$/.test(code);
}

export interface Expr {
  code: string;
  ty: Ty;
  prec: number;
  tags: Construct[];
}

export type Stmt =
  | { k: 'assign'; target: string; value: Expr; tags?: Construct[] }
  | { k: 'aug'; target: string; op: string; value: Expr }
  | { k: 'expr'; value: Expr }
  | { k: 'if'; branches: Array<{ cond: Expr; body: Stmt[] }>; orelse?: Stmt[] }
  | { k: 'for'; target: string; iter: Expr; body: Stmt[]; nested: boolean }
  | { k: 'while'; cond: Expr; body: Stmt[]; nested: boolean }
  | { k: 'return'; value: Expr; early: boolean }
  | { k: 'break' }
  | { k: 'continue' }
  | { k: 'try'; body: Stmt[]; handlers: Array<{ exc: string; body: Stmt[] }> }
  | { k: 'raise'; exc: string; message: string; caught: boolean };

export interface FuncDef {
  name: string;
  params: string[];
  body: Stmt[];
  /** Function-level constructs: helper, recursion, method. */
  tags: Construct[];
}

export interface ClassDef {
  name: string;
  /** `class Name(Base):` when set (custom exceptions). */
  base?: string;
  methods: FuncDef[];
}

export interface ProgramIR {
  classes: ClassDef[];
  /** Helpers first, the entry function last. */
  funcs: FuncDef[];
}

export function expr(code: string, ty: Ty, prec: number, ...tagLists: Array<Construct[] | Construct>): Expr {
  const tags: Construct[] = [];
  for (const t of tagLists) {
    if (Array.isArray(t)) tags.push(...t);
    else tags.push(t);
  }
  return { code, ty, prec, tags };
}

/** `e` rendered so it can sit where precedence `need` is required. */
export function wrap(e: Expr, need: number): string {
  return e.prec < need ? `(${e.code})` : e.code;
}

export function printProgram(p: ProgramIR): string {
  const blocks: string[] = [];
  for (const c of p.classes) blocks.push(printClass(c));
  for (const f of p.funcs) blocks.push(printFunc(f, ''));
  return blocks.join('\n\n') + '\n';
}

function printClass(c: ClassDef): string {
  const head = `class ${c.name}${c.base ? `(${c.base})` : ''}:`;
  if (c.methods.length === 0) return `${head}\n    pass`;
  return `${head}\n${c.methods.map((m) => printFunc(m, '    ')).join('\n\n')}`;
}

function printFunc(f: FuncDef, indent: string): string {
  const lines = [`${indent}def ${f.name}(${f.params.join(', ')}):`];
  printBlock(f.body, indent + '    ', lines);
  return lines.join('\n');
}

function printBlock(body: Stmt[], indent: string, out: string[]): void {
  if (body.length === 0) {
    out.push(`${indent}pass`);
    return;
  }
  for (const s of body) printStmt(s, indent, out);
}

function printStmt(s: Stmt, ind: string, out: string[]): void {
  const inner = ind + '    ';
  switch (s.k) {
    case 'assign':
      out.push(`${ind}${s.target} = ${s.value.code}`);
      return;
    case 'aug':
      out.push(`${ind}${s.target} ${s.op}= ${s.value.code}`);
      return;
    case 'expr':
      out.push(`${ind}${s.value.code}`);
      return;
    case 'if':
      s.branches.forEach((b, i) => {
        out.push(`${ind}${i === 0 ? 'if' : 'elif'} ${b.cond.code}:`);
        printBlock(b.body, inner, out);
      });
      if (s.orelse) {
        out.push(`${ind}else:`);
        printBlock(s.orelse, inner, out);
      }
      return;
    case 'for':
      out.push(`${ind}for ${s.target} in ${s.iter.code}:`);
      printBlock(s.body, inner, out);
      return;
    case 'while':
      out.push(`${ind}while ${s.cond.code}:`);
      printBlock(s.body, inner, out);
      return;
    case 'return':
      out.push(`${ind}return ${s.value.code}`);
      return;
    case 'break':
    case 'continue':
      out.push(`${ind}${s.k}`);
      return;
    case 'try':
      out.push(`${ind}try:`);
      printBlock(s.body, inner, out);
      for (const h of s.handlers) {
        out.push(`${ind}except ${h.exc}:`);
        printBlock(h.body, inner, out);
      }
      return;
    case 'raise':
      out.push(`${ind}raise ${s.exc}(${pyStr(s.message)})`);
      return;
  }
}

/**
 * A Python string literal for any text. Characters repr would not print (controls, separators
 * other than the space, lone surrogates) are written as escapes: a lone surrogate cannot be
 * encoded as UTF-8, so written raw it would reach Python as U+FFFD or not compile at all.
 */
export function pyStr(s: string): string {
  const quote = s.includes("'") ? '"' : "'";
  // The generator's text is printable ASCII: no character needs an escape of its own.
  if (/^[ -~]*$/.test(s)) return quote + s.replace(quote === '"' ? /[\\"]/g : /\\/g, '\\$&') + quote;
  let body = '';
  for (const ch of s) body += ch === '\\' || ch === quote ? `\\${ch}` : pyEscape(ch);
  return quote + body + quote;
}

const NAMED_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One code point as Python source writes it inside a literal (itself when printable). */
function pyEscape(ch: string): string {
  if (ch === ' ' || !/[\p{C}\p{Z}]/u.test(ch)) return ch;
  if (NAMED_ESCAPES[ch]) return NAMED_ESCAPES[ch];
  const cp = ch.codePointAt(0) ?? 0;
  const hex = cp.toString(16);
  if (cp < 0x100) return `\\x${hex.padStart(2, '0')}`;
  return cp < 0x10000 ? `\\u${hex.padStart(4, '0')}` : `\\U${hex.padStart(8, '0')}`;
}

/**
 * The same Python with every single-quoted string literal (f-strings too) written in double
 * quotes, unless its text holds a double quote. Only for the generator's own output, which has no
 * comments, no triple quotes and no escaped quotes inside single-quoted literals (pyStr).
 */
export function withDoubleQuotes(code: string): string {
  let out = '';
  let i = 0;
  while (i < code.length) {
    const quote = code[i];
    if (quote !== "'" && quote !== '"') {
      out += quote;
      i++;
      continue;
    }
    let end = i + 1;
    while (end < code.length && code[end] !== quote) end += code[end] === '\\' ? 2 : 1;
    const text = code.slice(i + 1, end);
    out += quote === "'" && !text.includes('"') ? `"${text}"` : code.slice(i, end + 1);
    i = end + 1;
  }
  return out;
}

/** Exact construct counts of a program. */
export function histogram(p: ProgramIR): Partial<Record<Construct, number>> {
  const h: Partial<Record<Construct, number>> = {};
  const add = (t: Construct, n = 1) => (h[t] = (h[t] ?? 0) + n);
  const addExpr = (e: Expr) => e.tags.forEach((t) => add(t));
  const walk = (body: Stmt[]) => {
    for (const s of body) {
      switch (s.k) {
        case 'assign':
          add('assign');
          s.tags?.forEach((t) => add(t));
          addExpr(s.value);
          break;
        case 'aug':
          add('augassign');
          addExpr(s.value);
          break;
        case 'expr':
          addExpr(s.value);
          break;
        case 'if':
          add('if');
          s.branches.forEach((b, i) => {
            if (i > 0) add('elif');
            addExpr(b.cond);
            walk(b.body);
          });
          if (s.orelse) {
            add('else');
            walk(s.orelse);
          }
          break;
        case 'for':
          add('for');
          if (s.nested) add('nested_loop');
          addExpr(s.iter);
          walk(s.body);
          break;
        case 'while':
          add('while');
          if (s.nested) add('nested_loop');
          addExpr(s.cond);
          walk(s.body);
          break;
        case 'return':
          if (s.early) add('early_return');
          addExpr(s.value);
          break;
        case 'break':
        case 'continue':
          add(s.k);
          break;
        case 'try':
          add('try');
          walk(s.body);
          s.handlers.forEach((hd) => walk(hd.body));
          break;
        case 'raise':
          add('raise');
          add(s.caught ? 'raise_caught' : 'raise_uncaught');
          break;
      }
    }
  };
  for (const c of p.classes) {
    add('class');
    for (const m of c.methods) {
      m.tags.forEach((t) => add(t));
      walk(m.body);
    }
  }
  for (const f of p.funcs) {
    f.tags.forEach((t) => add(t));
    walk(f.body);
  }
  return h;
}

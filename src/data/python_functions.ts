/**
 * Python function definitions found in any document — a module, a notebook dump, a web page
 * quoting code — by indentation alone, without parsing the document (most documents are not
 * a whole parseable module). Also a cheap shape of a function's text that two functions with
 * the same normalized AST (src/programs/normalize.py: names alpha-renamed, docstrings dropped,
 * formatting ignored) always share, so that only functions of an eval program's shape are sent
 * to Python for their program key.
 */

const DEF_RE = /^([ \t]*)(?:async[ \t]+)?def[ \t]+[A-Za-z_]\w*[ \t]*\(/;
/** A signature longer than this is not one (an unclosed bracket in prose), and must not make the scan quadratic. */
const MAX_SIGNATURE_LINES = 40;

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** Open-bracket depth after `line`, ignoring brackets in comments (strings are rare enough in signatures). */
function bracketDepth(line: string, depth: number): number {
  for (const c of line) {
    if (c === '#') break;
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
  }
  return depth;
}

export interface FoundFunction {
  /** The definition, dedented to column 0. */
  code: string;
  /** Indentation of its `def` line (0: a module-level function). */
  indent: number;
}

/** Every `def` block of `text`, nested ones too (a method or inner function can be a copied program). */
export function findFunctions(text: string): FoundFunction[] {
  const lines = text.split('\n');
  const out: FoundFunction[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = DEF_RE.exec(lines[i]);
    if (!m) continue;
    const indent = m[1].length;
    // The signature may span lines: it ends where its brackets close.
    let end = i;
    let depth = bracketDepth(lines[i], 0);
    while (depth > 0 && end + 1 < lines.length && end - i < MAX_SIGNATURE_LINES) depth = bracketDepth(lines[++end], depth);
    let last = end;
    for (let j = end + 1; j < lines.length; j++) {
      if (lines[j].trim() === '') continue;
      if (indentOf(lines[j]) <= indent) break;
      last = j;
    }
    const body = lines.slice(i, last + 1).map((l) => (l.slice(0, indent).trim() === '' ? l.slice(indent) : l.trimStart()));
    out.push({ code: body.join('\n').replace(/\s+$/, ''), indent });
  }
  return out;
}

const KEYWORDS = new Set(
  'and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield'.split(' '),
);

/**
 * Keywords in order and the sorted attribute names (`.append`), outside comments and string
 * literals (f-string contents are code, so they count). Renaming, reformatting, quoting style
 * and docstrings leave it unchanged; `None`/`True`/`False` are values, not counted, so a
 * `-> None` annotation (which the AST key drops) does not change it either.
 */
export function functionShape(code: string): string {
  const keywords: string[] = [];
  const attributes: string[] = [];
  // One sticky tokenizer pass: comment | string opener (with prefix) | name | attribute dot | other.
  const token = /#[^\n]*|([rRbBuUfF]{0,2})('''|"""|'|")|([A-Za-z_]\w*)|(\.)(?!\d)|\s+|./y;
  let afterDot = false;
  let m: RegExpExecArray | null;
  while (token.lastIndex < code.length && (m = token.exec(code))) {
    if (m[2] !== undefined) {
      const quote = m[2];
      const start = token.lastIndex;
      let j = start;
      while (j < code.length && !code.startsWith(quote, j)) {
        if (code[j] === '\\') j++;
        else if (quote.length === 1 && code[j] === '\n') break;
        j++;
      }
      if (/[fF]/.test(m[1])) {
        // The {expressions} of an f-string are code the AST keeps; its literal parts are not.
        const expressions = [...code.slice(start, j).matchAll(/\{([^{}]*)\}/g)].map((e) => e[1]).join('\n');
        const [k, a] = functionShape(expressions).split('|');
        if (k) keywords.push(...k.split(' '));
        if (a) attributes.push(...a.split(' '));
      }
      token.lastIndex = Math.min(code.length, j + quote.length);
      afterDot = false;
    } else if (m[3] !== undefined) {
      if (afterDot) attributes.push(m[3]);
      else if (KEYWORDS.has(m[3])) keywords.push(m[3]);
      afterDot = false;
    } else if (m[4] !== undefined) {
      afterDot = true;
    } else if (m[0][0] !== '#' && m[0].trim() !== '') {
      afterDot = false;
    }
  }
  return `${keywords.join(' ')}|${attributes.sort().join(' ')}`;
}

/**
 * Nested values for the variables view. NDL holds each local as its repr text only, so a
 * list, tuple, set or dict is expanded by splitting that text at its top-level commas (and a
 * dict item at its top-level colon); anything else (a string, a number, an object's repr, a
 * repr cut in the middle with `...`) is a leaf.
 */
import { splitParams } from '../eval/session_source';

export interface Child {
  name: string;
  value: string;
}

const BRACKETS: Record<string, string> = { '[': ']', '(': ')', '{': '}' };

/** The children of a container repr, or undefined for a leaf. */
export function childrenOf(repr: string): Child[] | undefined {
  const text = repr.trim();
  const open = text[0];
  if (!(open in BRACKETS) || text[text.length - 1] !== BRACKETS[open] || !balanced(text)) return undefined;
  const inner = text.slice(1, -1);
  if (inner.trim() === '') return undefined;
  const items = splitParams(inner);
  if (open === '(' && items.length === 1 && !/,\s*$/.test(inner)) return undefined; // parentheses, not a tuple
  if (open === '{') {
    const pairs = items.map(splitDictItem);
    if (pairs.every((p) => p !== undefined)) return (pairs as Child[]);
    if (pairs.some((p) => p !== undefined)) return undefined;
    return items.map((v, i) => ({ name: `{${i}}`, value: v })); // a set: no keys, shown by position
  }
  return items.map((v, i) => ({ name: `[${i}]`, value: v }));
}

/** Whether brackets outside strings close in order and the first one closes at the very end. */
function balanced(text: string): boolean {
  const stack: string[] = [];
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c in BRACKETS) stack.push(BRACKETS[c]);
    else if (c === ']' || c === ')' || c === '}') {
      if (stack.pop() !== c) return false;
      if (stack.length === 0 && i !== text.length - 1) return false;
    }
  }
  return stack.length === 0 && quote === '';
}

function splitDictItem(item: string): Child | undefined {
  let depth = 0;
  let quote = '';
  for (let i = 0; i < item.length; i++) {
    const c = item[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ':' && depth === 0) return { name: item.slice(0, i).trim(), value: item.slice(i + 1).trim() };
  }
  return undefined;
}

import * as path from 'path';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'trace');

/** Python's json.dumps(obj) with default arguments (", " / ": " separators, ensure_ascii). */
export function pyJson(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const obj = value as Record<string, unknown>;
  return `{${Object.entries(obj).map(([k, v]) => `${pyJson(k)}: ${pyJson(v)}`).join(', ')}}`;
}

/** Spec §3 delta: ".." first if something unchanged was left out, then new/changed in order. */
export function delta(now: Record<string, string>, before: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  const changed = Object.entries(now).filter(([k, v]) => before[k] !== v);
  if (changed.length < Object.keys(now).length) out['..'] = '..';
  for (const [k, v] of changed) out[k] = v;
  return out;
}

export interface RefFrame {
  sep: string;
  src: string;
  arg: string;
}

/** The frames of a canonical NDL document: event separator, SRC and the LOCALS/VALUE text. */
export function parseFrames(doc: string): RefFrame[] {
  const parts = doc.split('<|frame_sep|>').slice(1, -1); // drop the context and the exit
  return parts.map((p) => {
    const sep = /^<\|([a-z_]+)_sep\|>/.exec(p)![1];
    const src = /<\|src_sep\|>(.*?)<\|/s.exec(p)![1];
    const arg = /<\|arg_sep\|>(.*?)<\|/s.exec(p)![1];
    return { sep, src, arg };
  });
}

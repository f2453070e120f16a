/**
 * A human view of one NDL document, pdb style: the program, then one line per frame
 * (`#k event  line-text  locals-or-value  -> action`), then the exit. LOCALS are shown as
 * written (deltas keep their `..`), since that is what the model reads and writes.
 */
import { dumpsEntries, dumpsValue } from './pyjson';
import { parseDocument } from './parse';
import type { ParsedFrame } from './types';

function actionText(f: ParsedFrame): string {
  if (!f.action) return '(no action: budget end)';
  return f.action.kind === 'breakpoint' ? `breakpoint ${JSON.stringify(f.action.target)}` : f.action.kind;
}

function argText(f: ParsedFrame): string {
  if (f.shown === undefined) return '= ' + dumpsValue(f.value ?? null);
  return dumpsEntries(f.elided ? [['..', '..'], ...f.shown] : f.shown);
}

export function renderDocument(header: string, text: string): string {
  const doc = parseDocument(text);
  const lines: string[] = [header, '--- context ---', doc.context.replace(/\n$/, ''), '--- frames ---'];
  const srcWidth = Math.min(48, Math.max(8, ...doc.frames.map((f) => f.src.length)));
  doc.frames.forEach((f, k) => {
    const src = f.src.length > srcWidth ? f.src.slice(0, srcWidth - 1) + '…' : f.src.padEnd(srcWidth);
    lines.push(`#${String(k).padStart(3)} ${f.event.padEnd(13)} ${src}  ${argText(f)}  -> ${actionText(f)}`);
  });
  if (doc.exit) lines.push(`exit: ${doc.exit}`);
  else if (doc.complete) lines.push('end: frame or token budget');
  if (doc.error) lines.push(`parse error: ${doc.error}`);
  return lines.join('\n') + '\n';
}

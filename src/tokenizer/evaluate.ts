import type { Tokenizer } from './index';
import { ESCAPE, NEWLINE } from './escape';

export interface Compression {
  docs: number;
  bytes: number;
  tokens: number;
  /** UTF-8 bytes per token: higher is better (fewer tokens, cheaper training). */
  bytesPerToken: number;
  /** Documents with decode(encode(x)) === x. */
  exactRoundTrips: number;
}

/** Compression and exact round trips of a tokenizer on a set of documents. */
export function measureCompression(tok: Tokenizer, texts: string[]): Compression {
  let bytes = 0;
  let tokens = 0;
  let exact = 0;
  for (const t of texts) {
    const ids = tok.encode(t);
    bytes += Buffer.byteLength(t, 'utf8');
    tokens += ids.length;
    if (tok.decode(ids) === t) exact++;
  }
  return { docs: texts.length, bytes, tokens, bytesPerToken: tokens ? round(bytes / tokens, 4) : 0, exactRoundTrips: exact };
}

export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/**
 * Cuts escaped text into training sentences of at most `maxChars` characters. spm_train reads
 * one sentence per line and drops sentences over --max_sentence_length, so long documents must
 * be cut; cuts go after a newline (code) or before `<|` (an NDL token), so that no special
 * token and no escape pair is split, and only fall back to a hard cut in one huge line.
 */
export function chunkForTraining(escaped: string, maxChars: number): string[] {
  const out: string[] = [];
  let start = 0;
  while (escaped.length - start > maxChars) {
    const limit = start + maxChars;
    let cut = escaped.lastIndexOf(NEWLINE, limit - 1) + 1;
    if (cut <= start + maxChars / 4) cut = Math.max(cut, escaped.lastIndexOf('<|', limit - 1));
    if (cut <= start + maxChars / 4) {
      cut = limit;
      if (escaped[cut - 1] === ESCAPE) cut--; // keep an escape pair together
      // Do not cut a surrogate pair either.
      const c = escaped.charCodeAt(cut - 1);
      if (c >= 0xd800 && c <= 0xdbff) cut--;
    }
    out.push(escaped.slice(start, cut));
    start = cut;
  }
  if (start < escaped.length) out.push(escaped.slice(start));
  return out;
}

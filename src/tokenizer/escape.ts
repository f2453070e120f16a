/**
 * The reversible text layer between ndbg and sentencepiece ("ndbg-escape-v1").
 *
 * sentencepiece cannot see a raw "\n" at training time: `spm_train` reads one sentence per
 * line, so pieces such as `):⏎` or a newline before an indented block could never be learned.
 * And at encode time it turns every space into U+2581 (▁) and back, so a literal ▁ in the
 * input would come back as a space. This layer maps text into a form that sentencepiece
 * round-trips exactly, and back:
 *
 *   "\n"      -> NEWLINE (U+E00A, a private-use char the trainer sees as an ordinary char)
 *   U+2581 ▁  -> ESCAPE + U+E081
 *   U+E000    -> ESCAPE + U+E000      (ESCAPE is U+E000 itself)
 *   U+E00A    -> ESCAPE + U+E00A
 *
 * Everything else (tabs, "\r", NUL, emoji, any unicode) passes through; the model is trained
 * with the identity normalizer and byte fallback, so sentencepiece keeps it byte for byte.
 * The three private-use chars essentially never occur in code or traces, so escaped text is
 * the input with newlines replaced, and the escapes cost tokens only when they do occur.
 */
export const ESCAPE = '\uE000';
export const NEWLINE = '\uE00A';
const SPACE_MARK = '\u2581';
const SPACE_MARK_ESCAPED = '\uE081';

export const ESCAPE_SCHEME = 'ndbg-escape-v1';

const NEEDS_ESCAPE = /[\n\u2581\uE000\uE00A]/g;
const NEEDS_UNESCAPE = /\uE000([\s\S])|\uE00A/g;

/** Text as the sentencepiece model sees it (training sentences and encode input). */
export function escapeForSpm(text: string): string {
  return text.replace(NEEDS_ESCAPE, (c) => {
    if (c === '\n') return NEWLINE;
    if (c === SPACE_MARK) return ESCAPE + SPACE_MARK_ESCAPED;
    return ESCAPE + c;
  });
}

/**
 * Inverse of escapeForSpm. A dangling ESCAPE at the very end (possible only in model output,
 * never in escapeForSpm's) is kept as is.
 */
export function unescapeFromSpm(text: string): string {
  return text.replace(NEEDS_UNESCAPE, (_m, c: string | undefined) => {
    if (c === undefined) return '\n';
    if (c === SPACE_MARK_ESCAPED) return SPACE_MARK;
    return c;
  });
}

/**
 * Index of the first lone surrogate, or -1. A JS string with a lone surrogate has no UTF-8
 * form, so sentencepiece would silently turn it into other characters; we refuse it instead.
 */
export function firstLoneSurrogate(text: string): number {
  // Fast path: Node >= 20 has String.prototype.isWellFormed.
  const wellFormed = (text as unknown as { isWellFormed?: () => boolean }).isWellFormed;
  if (wellFormed && wellFormed.call(text)) return -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const d = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return i;
    } else if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

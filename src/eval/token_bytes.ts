/**
 * The bytes each token id adds to a text, which constrained decoding (src_constraint.ts,
 * frame_grammar.ts) checks continuations against: on UTF-8 bytes, because byte-fallback pieces
 * carry single bytes of a character and sentencepiece may spell one text in several ways.
 */
import { SPECIAL_TOKENS } from '../ndl/tokens';
import type { TextTokenizer } from '../tokenizer/types';

export interface TokenBytes {
  /** The bytes a token adds to the text; undefined for special and control tokens. */
  bytes: (Buffer | undefined)[];
  /** Ids with bytes, by their first byte. */
  byFirstByte: Map<number, number[]>;
  /** Every id with bytes (every token that writes text), ascending. */
  textIds: number[];
}

const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;
const cache = new WeakMap<TextTokenizer, TokenBytes>();

/** The id of an NDL special token; an error naming it when the tokenizer has none. */
export function specialId(tok: TextTokenizer, token: string, who: string): number {
  const id = tok.idOf?.(token);
  if (id === undefined) throw new Error(`${who}: the tokenizer has no id for ${token} (not an NDL tokenizer)`);
  return id;
}

export function tokenBytes(tok: TextTokenizer & { pieceOf?(id: number): string }): TokenBytes {
  const cached = cache.get(tok);
  if (cached) return cached;
  const special = new Set(SPECIAL_TOKENS.map((t) => specialId(tok, t, 'constrained decoding')));
  const bytes: (Buffer | undefined)[] = [];
  const byFirstByte = new Map<number, number[]>();
  const textIds: number[] = [];
  for (let id = 0; id < tok.vocabSize; id++) {
    let b: Buffer | undefined;
    const byte = tok.pieceOf ? BYTE_PIECE.exec(tok.pieceOf(id)) : null;
    if (byte) b = Buffer.of(parseInt(byte[1], 16));
    else if (!special.has(id)) {
      const text = tok.decode([id]);
      // Control pieces decode to nothing; a lone byte of a character decodes to U+FFFD.
      if (text && !text.includes('\uFFFD')) b = Buffer.from(text, 'utf8');
    }
    bytes.push(b);
    if (b) {
      textIds.push(id);
      const list = byFirstByte.get(b[0]);
      if (list) list.push(id);
      else byFirstByte.set(b[0], [id]);
    }
  }
  const v: TokenBytes = { bytes, byFirstByte, textIds };
  cache.set(tok, v);
  return v;
}

/**
 * Piece dropout: training text whose multi-character pieces are now and then written as smaller
 * pieces, so that a model learns which characters a piece holds (a form of subword
 * regularization, Kudo 2018; Provilkov et al. 2020). Stepping `for c in s:` over `'berry'`
 * binds `'b'`, `'e'`, ... while the canonical segmentation shows `b` `err` `y`: a model that
 * never saw `err` spelled out cannot read its first character (docs/eval.md, session 27).
 *
 * A word piece (two or more letters or digits, after an optional leading space) is split with
 * probability p at a uniform point between its letters, and each side is
 * written as its best segmentation under the model's own piece scores (a unigram Viterbi over
 * the normal pieces, bytes where no piece covers a character). The text decodes to the same
 * string. Punctuation, whitespace, special, control and byte pieces are never split: the
 * document's structure keeps its pieces, and its tokens grow less. Splits stop where the document
 * would outgrow its token limit, so a document that fit still fits.
 */
import type { Rng } from '../util/rng';
import { PieceType, type ModelPiece } from './model-proto';

/** The longest piece the segmenter looks up, in UTF-16 units (the shipped models' pieces are shorter). */
const MAX_PIECE_UNITS = 32;

/** Two or more letters or digits, after sentencepiece's space mark at most once. */
const WORD_PIECE = /^\u2581?[\p{L}\p{N}]{2,}$/u;

export class PieceDropout {
  private readonly normal = new Map<string, { id: number; score: number }>();
  private readonly byteIds = new Map<number, number>();
  private readonly splits = new Map<string, number[]>();

  constructor(private readonly pieces: readonly ModelPiece[], readonly probability: number) {
    if (!(probability >= 0 && probability <= 1)) throw new RangeError(`piece dropout must be in [0, 1], got ${probability}`);
    pieces.forEach((p, id) => {
      if (p.type === PieceType.NORMAL) this.normal.set(p.piece, { id, score: p.score });
      const byte = /^<0x([0-9A-F]{2})>$/.exec(p.piece);
      if (p.type === PieceType.BYTE && byte) this.byteIds.set(parseInt(byte[1], 16), id);
    });
  }

  /** `ids` with some pieces split, at most `maxTokens` ids long (never longer than it would be otherwise). */
  apply(ids: ArrayLike<number>, rng: Rng, maxTokens: number): Uint32Array {
    const out: number[] = [];
    let room = maxTokens - ids.length;
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      const chars = this.splittable(id);
      // Draw for every piece, split or not, so one piece's choice does not shift the others'.
      const u = rng.next();
      // Between two letters: a leading space mark stays with the first letter.
      const first = chars && chars[0] === '\u2581' ? 2 : 1;
      const at = chars ? first + Math.floor(rng.next() * (chars.length - first)) : 0;
      if (chars && u < this.probability) {
        const parts = this.split(id, chars, at);
        if (parts.length - 1 <= room) {
          room -= parts.length - 1;
          out.push(...parts);
          continue;
        }
      }
      out.push(id);
    }
    return Uint32Array.from(out);
  }

  /** The characters of a word piece, else undefined. */
  private splittable(id: number): string[] | undefined {
    const p = this.pieces[id];
    if (p === undefined || p.type !== PieceType.NORMAL || !WORD_PIECE.test(p.piece)) return undefined;
    return Array.from(p.piece);
  }

  private split(id: number, chars: string[], at: number): number[] {
    const key = `${id}:${at}`;
    let parts = this.splits.get(key);
    if (parts === undefined) {
      parts = [...this.segment(chars.slice(0, at).join('')), ...this.segment(chars.slice(at).join(''))];
      this.splits.set(key, parts);
    }
    return parts;
  }

  /** The highest-scoring segmentation of `text` into normal pieces; a character no piece covers is written as its UTF-8 bytes. */
  segment(text: string): number[] {
    const n = text.length;
    const best = new Float64Array(n + 1).fill(-Infinity);
    const back: Array<{ from: number; ids: number[] }> = new Array(n + 1);
    best[0] = 0;
    for (let end = 1; end <= n; end++) {
      for (let start = Math.max(0, end - MAX_PIECE_UNITS); start < end; start++) {
        if (best[start] === -Infinity) continue;
        const piece = this.normal.get(text.slice(start, end));
        if (piece && best[start] + piece.score > best[end]) {
          best[end] = best[start] + piece.score;
          back[end] = { from: start, ids: [piece.id] };
        }
      }
      // A character no piece covers, as bytes (scored below any piece, as sentencepiece's fallback
      // is); never from inside a surrogate pair.
      const unit = text.charCodeAt(end - 1);
      const start = end - (isLowSurrogate(unit) && end >= 2 ? 2 : 1);
      if (best[end] === -Infinity && !isHighSurrogate(unit) && best[start] !== -Infinity) {
        const bytes = [...Buffer.from(text.slice(start, end), 'utf8')].map((b) => this.byteIds.get(b));
        if (bytes.every((b) => b !== undefined)) {
          best[end] = best[start] - 100;
          back[end] = { from: start, ids: bytes as number[] };
        }
      }
    }
    if (best[n] === -Infinity) throw new Error(`piece dropout: no segmentation of ${JSON.stringify(text)}`);
    const out: number[][] = [];
    for (let at = n; at > 0; at = back[at].from) out.push(back[at].ids);
    return out.reverse().flat();
  }
}

const isHighSurrogate = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;

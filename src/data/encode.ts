/**
 * Documents to framed token ids: the tokenizer's batch encoder (its one worker pool, see
 * src/tokenizer/encode-pool.ts), piece dropout on training documents when asked
 * (src/tokenizer/piece_dropout.ts), then frameDocument (BOS/EOS and the loss mask, pack.ts).
 * Results come back in input order, so the output does not depend on the number of workers.
 */
import { createHash } from 'crypto';
import { Tokenizer, type TextTokenizer } from '../tokenizer';
import { PieceDropout } from '../tokenizer/piece_dropout';
import { UserError } from '../util/errors';
import { Rng } from '../util/rng';
import { frameDocument, specialIds, type EncodedDocument, type MaskOptions, type SpecialIds } from './pack';

/** Piece dropout on the training split: each word piece split with this probability, drawn from this seed. */
export interface PieceDropoutSettings {
  probability: number;
  seed: number;
}

export class DocumentEncoder {
  private readonly ids: SpecialIds;
  private readonly dropout?: { pieces: PieceDropout; seed: number; rowLen: number };

  /** workers = 0 encodes on the calling thread; rowLen bounds a document that piece dropout lengthens. */
  constructor(
    private readonly tok: TextTokenizer,
    private readonly mask: MaskOptions,
    private readonly workers: number,
    dropout?: PieceDropoutSettings & { rowLen: number },
  ) {
    this.ids = specialIds(tok);
    if (dropout && dropout.probability > 0) {
      if (!(tok instanceof Tokenizer)) throw new UserError('--piece-dropout needs a sentencepiece tokenizer (the byte tokenizer has no pieces to split)');
      this.dropout = { pieces: new PieceDropout(tok.modelPieces, dropout.probability), seed: dropout.seed, rowLen: dropout.rowLen };
    }
  }

  /** One EncodedDocument per text; `dropoutOn[i]` asks for piece dropout on text i (a training document). */
  async encode(texts: string[], dropoutOn?: readonly boolean[]): Promise<EncodedDocument[]> {
    const raw = await this.tok.encodeBatch(texts, { workers: this.workers });
    return raw.map((r, i) => frameDocument(this.dropout && dropoutOn?.[i] ? this.withDropout(texts[i], r) : r, this.ids, this.mask));
  }

  /** The document's ids with pieces split, drawn from the text itself so that the order of documents does not matter. */
  private withDropout(text: string, ids: ArrayLike<number>): ArrayLike<number> {
    const { pieces, seed, rowLen } = this.dropout!;
    const framing = (ids[0] === this.ids.bos ? 0 : 1) + (ids[ids.length - 1] === this.ids.eos ? 0 : 1);
    const key = createHash('sha256').update(text).digest('hex');
    return pieces.apply(ids, Rng.from(seed, 'piece-dropout', key), rowLen - framing);
  }

  /** Stops the tokenizer's worker threads. */
  close(): Promise<void> {
    return this.tok.close();
  }
}

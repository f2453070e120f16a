/**
 * Documents to framed token ids: the tokenizer's batch encoder (its one worker pool, see
 * src/tokenizer/encode-pool.ts) followed by frameDocument (BOS/EOS and the loss mask, pack.ts).
 * Results come back in input order, so the output does not depend on the number of workers.
 */
import type { TextTokenizer } from '../tokenizer';
import { frameDocument, specialIds, type EncodedDocument, type MaskOptions, type SpecialIds } from './pack';

export class DocumentEncoder {
  private readonly ids: SpecialIds;

  /** workers = 0 encodes on the calling thread. */
  constructor(private readonly tok: TextTokenizer, private readonly mask: MaskOptions, private readonly workers: number) {
    this.ids = specialIds(tok);
  }

  /** One EncodedDocument per text. */
  async encode(texts: string[]): Promise<EncodedDocument[]> {
    const raw = await this.tok.encodeBatch(texts, { workers: this.workers });
    return raw.map((r) => frameDocument(r, this.ids, this.mask));
  }

  /** Stops the tokenizer's worker threads. */
  close(): Promise<void> {
    return this.tok.close();
  }
}

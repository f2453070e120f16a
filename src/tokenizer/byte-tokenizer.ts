import { createHash } from 'crypto';
import { SPECIAL_TOKENS, DOCUMENT_TOKENS } from '../ndl/tokens';
import type { TextTokenizer } from './types';

export const BYTE_TOKENIZER_NAME = 'byte';

/**
 * A byte-level tokenizer: each NDL special token (in SPECIAL_TOKENS order) is one id, then the
 * 256 UTF-8 byte values follow. Deterministic, dependency free, lossless on any text. It is a
 * real tokenizer, only a weak one (about 1 token per byte); sentencepiece is the production one.
 */
export class ByteTokenizer implements TextTokenizer {
  readonly vocabSize = SPECIAL_TOKENS.length + 256;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  readonly sha256: string;
  private readonly specials = new Map<string, number>();
  private readonly byteBase = SPECIAL_TOKENS.length;

  constructor() {
    SPECIAL_TOKENS.forEach((t, i) => this.specials.set(t, i));
    this.bosId = this.specials.get(DOCUMENT_TOKENS.begin)!;
    this.eosId = this.specials.get(DOCUMENT_TOKENS.end)!;
    this.padId = this.specials.get(DOCUMENT_TOKENS.pad)!;
    this.sha256 = createHash('sha256').update(`ndbg-byte-tokenizer-v1\n${SPECIAL_TOKENS.join('\n')}`).digest('hex');
  }

  idOf(token: string): number | undefined {
    return this.specials.get(token);
  }

  encode(text: string): Uint32Array {
    // Split at special tokens, then map each UTF-8 byte b to id byteBase + b.
    const pieces: Array<string | number> = [];
    let start = 0;
    let at = text.indexOf('<|');
    while (at >= 0) {
      const close = text.indexOf('|>', at + 2);
      if (close < 0) break;
      const id = this.specials.get(text.slice(at, close + 2));
      if (id === undefined) {
        at = text.indexOf('<|', at + 1);
        continue;
      }
      if (at > start) pieces.push(text.slice(start, at));
      pieces.push(id);
      start = close + 2;
      at = text.indexOf('<|', start);
    }
    if (start < text.length) pieces.push(text.slice(start));
    const bufs = pieces.map((p) => (typeof p === 'number' ? p : Buffer.from(p, 'utf8')));
    const out = new Uint32Array(bufs.reduce<number>((a, b) => a + (typeof b === 'number' ? 1 : b.length), 0));
    let k = 0;
    for (const b of bufs) {
      if (typeof b === 'number') out[k++] = b;
      else for (let i = 0; i < b.length; i++) out[k++] = b[i] + this.byteBase;
    }
    return out;
  }

  /** Byte encoding is cheaper than a worker round trip: always on the calling thread. */
  async encodeBatch(texts: string[]): Promise<Uint32Array[]> {
    return texts.map((t) => this.encode(t));
  }

  async close(): Promise<void> {}

  decode(ids: ArrayLike<number>): string {
    let text = '';
    let bytes: number[] = [];
    const flush = () => {
      if (bytes.length) text += Buffer.from(bytes).toString('utf8');
      bytes = [];
    };
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id >= this.byteBase && id < this.vocabSize) bytes.push(id - this.byteBase);
      else {
        flush();
        text += SPECIAL_TOKENS[id] ?? `<|unk:${id}|>`;
      }
    }
    flush();
    return text;
  }
}

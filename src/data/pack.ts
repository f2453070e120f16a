/**
 * From documents to fixed-length rows. Invariants (what the loader and trainer may assume):
 * - every document is `BOS ... EOS`; a document whose text already starts/ends with those
 *   tokens (NDL documents do) is not given a second pair;
 * - the packed stream of one source/split is the documents in input order, back to back;
 *   row r is stream[r*T .. r*T+T] (T+1 tokens), so consecutive rows share one token and every
 *   stream token after the first is a prediction target exactly once;
 * - loss_mask[i] = 1 when token i is a target the model should learn: 0 for padding, for each
 *   document's BOS (predicting it would cross a document boundary) and, with maskContext, for
 *   the code context of NDL documents (`<|trace_context_start|>` up to, not including, the first
 *   `<|frame_sep|>`);
 * - doc_ids[i] = ordinal of token i's document within its source/split, -1 for padding.
 */
import { STRUCTURE_TOKENS } from '../ndl/tokens';
import { specialId, type TextTokenizer } from './tokenizer';

export interface MaskOptions {
  /** Exclude NDL code contexts from the loss (see the module comment). */
  maskContext: boolean;
}

export interface EncodedDocument {
  ids: Uint32Array;
  mask: Uint8Array;
}

export interface SpecialIds {
  bos: number;
  eos: number;
  pad: number;
  contextStart?: number;
  frameSep?: number;
}

export function specialIds(tok: TextTokenizer): SpecialIds {
  return {
    bos: tok.bosId,
    eos: tok.eosId,
    pad: tok.padId,
    contextStart: specialId(tok, STRUCTURE_TOKENS.traceContextStart),
    frameSep: specialId(tok, STRUCTURE_TOKENS.frameSep),
  };
}

/** Token ids of one document with BOS/EOS ensured, and its loss mask. */
export function frameDocument(raw: ArrayLike<number>, ids: SpecialIds, opts: MaskOptions): EncodedDocument {
  const addBos = raw.length === 0 || raw[0] !== ids.bos;
  const addEos = raw.length === 0 || raw[raw.length - 1] !== ids.eos;
  const n = raw.length + (addBos ? 1 : 0) + (addEos ? 1 : 0);
  const out = new Uint32Array(n);
  let k = 0;
  if (addBos) out[k++] = ids.bos;
  for (let i = 0; i < raw.length; i++) out[k++] = raw[i];
  if (addEos) out[k++] = ids.eos;
  const mask = new Uint8Array(n).fill(1);
  for (let i = 0; i < n; i++) if (out[i] === ids.bos) mask[i] = 0;
  if (opts.maskContext && ids.contextStart !== undefined && ids.frameSep !== undefined) {
    const start = out.indexOf(ids.contextStart);
    if (start >= 0) {
      let end = out.indexOf(ids.frameSep, start);
      if (end < 0) end = n;
      mask.fill(0, start, end);
    }
  }
  return { ids: out, mask };
}

export type RowSink = (tokens: Uint32Array, mask: Uint8Array, docIds: Int32Array) => void;

/** Cuts the stream of documents into rows of rowLen tokens, one shared token between rows. */
export class RowPacker {
  private readonly tokens: Uint32Array;
  private readonly mask: Uint8Array;
  private readonly docIds: Int32Array;
  private fill = 0;
  private rowsOut = 0;
  tokensIn = 0;

  constructor(readonly rowLen: number, private readonly padId: number, private readonly sink: RowSink) {
    if (rowLen < 2) throw new Error(`RowPacker: rowLen must be >= 2, got ${rowLen}`);
    this.tokens = new Uint32Array(rowLen);
    this.mask = new Uint8Array(rowLen);
    this.docIds = new Int32Array(rowLen);
  }

  get rows(): number {
    return this.rowsOut;
  }

  push(doc: EncodedDocument, docId: number): void {
    const n = doc.ids.length;
    this.tokensIn += n;
    let i = 0;
    while (i < n) {
      const take = Math.min(n - i, this.rowLen - this.fill);
      this.tokens.set(doc.ids.subarray(i, i + take), this.fill);
      this.mask.set(doc.mask.subarray(i, i + take), this.fill);
      this.docIds.fill(docId, this.fill, this.fill + take);
      this.fill += take;
      i += take;
      if (this.fill === this.rowLen) this.emit();
    }
  }

  /** Pads and emits the last partial row, unless it holds only the token shared with the previous row. */
  finish(): void {
    if (this.fill === 0 || (this.fill === 1 && this.rowsOut > 0)) return;
    this.tokens.fill(this.padId, this.fill);
    this.mask.fill(0, this.fill);
    this.docIds.fill(-1, this.fill);
    this.fill = this.rowLen;
    this.emit();
    this.fill = 0;
  }

  private emit(): void {
    this.sink(this.tokens, this.mask, this.docIds);
    this.rowsOut++;
    const last = this.rowLen - 1;
    this.tokens[0] = this.tokens[last];
    this.mask[0] = this.mask[last];
    this.docIds[0] = this.docIds[last];
    this.fill = 1;
  }
}

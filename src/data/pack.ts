/**
 * From documents to fixed-length rows of T+1 tokens. Two packings, chosen per source kind:
 * - whole documents (NDL, by default): each row holds complete documents plus padding, never a
 *   piece of one (WholeDocumentPacker); a document longer than a row is dropped and counted;
 * - a stream (code, text): the documents in input order, back to back; row r is
 *   stream[r*T .. r*T+T], so consecutive rows share one token and every stream token after the
 *   first is a prediction target exactly once (RowPacker).
 * Invariants (what the loader and trainer may assume):
 * - every document is `BOS ... EOS`; a document whose text already starts/ends with those
 *   tokens (NDL documents do) is not given a second pair;
 * - loss_mask[i] = 1 when token i is a target the model should learn: 0 for padding, for each
 *   document's BOS (predicting it would cross a document boundary) and, with maskContext, for
 *   the code context of NDL documents (`<|trace_context_start|>` up to, not including, the first
 *   `<|frame_sep|>`);
 * - doc_ids[i] = ordinal of token i's document within its source/split, -1 for padding.
 */
import { STRUCTURE_TOKENS } from '../ndl/tokens';
import { specialId, type TextTokenizer } from '../tokenizer';

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
  readonly stats: PackStats = emptyPackStats();

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
    let split = false;
    while (i < n) {
      const take = Math.min(n - i, this.rowLen - this.fill);
      this.tokens.set(doc.ids.subarray(i, i + take), this.fill);
      this.mask.set(doc.mask.subarray(i, i + take), this.fill);
      this.docIds.fill(docId, this.fill, this.fill + take);
      this.fill += take;
      i += take;
      if (this.fill === this.rowLen) {
        this.emit();
        if (i < n) split = true;
      }
    }
    if (split) this.stats.documentsSplit++;
  }

  /** Pads and emits the last partial row, unless it holds only the token shared with the previous row. */
  finish(): void {
    if (this.fill === 0 || (this.fill === 1 && this.rowsOut > 0)) return;
    this.tokens.fill(this.padId, this.fill);
    this.mask.fill(0, this.fill);
    this.docIds.fill(-1, this.fill);
    this.stats.paddingTokens += this.rowLen - this.fill;
    this.fill = this.rowLen;
    this.emit();
    this.fill = 0;
  }

  private emit(): void {
    this.sink(this.tokens, this.mask, this.docIds);
    this.rowsOut++;
    this.stats.targetTokens += this.rowLen - 1;
    const last = this.rowLen - 1;
    this.tokens[0] = this.tokens[last];
    this.mask[0] = this.mask[last];
    this.docIds[0] = this.docIds[last];
    this.fill = 1;
  }
}

/** What a packer did with its documents (reported per source and split in the manifest). */
export interface PackStats {
  /** Documents cut across two or more rows (always 0 for whole-document packing). */
  documentsSplit: number;
  /** Documents left out because they alone are longer than a row. */
  documentsDropped: number;
  tokensDropped: number;
  /** Padding tokens written (targets 1..T of each row only, as in the manifest's token counts). */
  paddingTokens: number;
  /** Target positions written (rows × T). */
  targetTokens: number;
}

export function emptyPackStats(): PackStats {
  return { documentsSplit: 0, documentsDropped: 0, tokensDropped: 0, paddingTokens: 0, targetTokens: 0 };
}

/**
 * Whole-document packing ("Fewer Truncations Improve Language Modeling", Ding et al. 2024): each
 * row holds complete documents and padding, never a piece of one, so every NDL row shows its
 * program. Documents are gathered in windows of `windowDocs`; a window is packed best-fit
 * decreasing (longest first, each into the fullest row it fits, ties by arrival), and its rows
 * are emitted in the order of their earliest document, so the output is a pure function of the
 * input order. Rows do not overlap: a row of rowLen tokens holds documents of up to rowLen
 * tokens, and its position 0 (a BOS, never a target) starts the first one.
 */
export class WholeDocumentPacker {
  readonly stats: PackStats = emptyPackStats();
  private window: Array<{ doc: EncodedDocument; docId: number }> = [];
  private rowsOut = 0;

  constructor(
    readonly rowLen: number,
    private readonly padId: number,
    private readonly sink: RowSink,
    private readonly windowDocs = 2048,
  ) {
    if (rowLen < 2) throw new Error(`WholeDocumentPacker: rowLen must be >= 2, got ${rowLen}`);
  }

  get rows(): number {
    return this.rowsOut;
  }

  push(doc: EncodedDocument, docId: number): void {
    if (doc.ids.length > this.rowLen) {
      this.stats.documentsDropped++;
      this.stats.tokensDropped += doc.ids.length;
      return;
    }
    this.window.push({ doc, docId });
    if (this.window.length >= this.windowDocs) this.packWindow();
  }

  finish(): void {
    this.packWindow();
  }

  private packWindow(): void {
    const docs = this.window;
    this.window = [];
    if (!docs.length) return;
    const order = docs.map((_, i) => i).sort((a, b) => docs[b].doc.ids.length - docs[a].doc.ids.length || a - b);
    const rows: Array<{ free: number; members: number[] }> = [];
    for (const i of order) {
      const n = docs[i].doc.ids.length;
      let best = -1;
      for (let r = 0; r < rows.length; r++) {
        if (rows[r].free >= n && (best < 0 || rows[r].free < rows[best].free)) best = r;
      }
      if (best < 0) {
        rows.push({ free: this.rowLen, members: [] });
        best = rows.length - 1;
      }
      rows[best].free -= n;
      rows[best].members.push(i);
    }
    for (const row of rows) row.members.sort((a, b) => a - b);
    rows.sort((a, b) => a.members[0] - b.members[0]);
    const tokens = new Uint32Array(this.rowLen);
    const mask = new Uint8Array(this.rowLen);
    const docIds = new Int32Array(this.rowLen);
    for (const row of rows) {
      let fill = 0;
      for (const i of row.members) {
        const { doc, docId } = docs[i];
        tokens.set(doc.ids, fill);
        mask.set(doc.mask, fill);
        docIds.fill(docId, fill, fill + doc.ids.length);
        fill += doc.ids.length;
      }
      tokens.fill(this.padId, fill);
      mask.fill(0, fill);
      docIds.fill(-1, fill);
      this.stats.paddingTokens += this.rowLen - Math.max(fill, 1);
      this.stats.targetTokens += this.rowLen - 1;
      this.sink(tokens, mask, docIds);
      this.rowsOut++;
    }
  }
}

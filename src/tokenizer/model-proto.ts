/**
 * A minimal reader of sentencepiece's `.model` file (a serialized ModelProto, see
 * sentencepiece_model.proto). sentencepiece-js exposes only encode/decode, not the piece
 * table, and ignores load errors, so the Tokenizer reads the file itself to validate the
 * special tokens and the normalizer and to map pieces to ids.
 *
 * Only the fields ndbg needs are decoded; unknown fields are skipped by wire type.
 */
export enum PieceType {
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
}

export interface ModelPiece {
  piece: string;
  score: number;
  type: PieceType;
}

export interface NormalizerInfo {
  name: string;
  addDummyPrefix: boolean;
  removeExtraWhitespaces: boolean;
  escapeWhitespaces: boolean;
}

export interface TrainerInfo {
  modelType: 'unigram' | 'bpe' | 'word' | 'char' | 'unknown';
  vocabSize: number;
  splitDigits: boolean;
  byteFallback: boolean;
  splitByWhitespace: boolean;
  allowWhitespaceOnlyPieces: boolean;
}

export interface ModelInfo {
  pieces: ModelPiece[];
  normalizer: NormalizerInfo;
  trainer: TrainerInfo;
}

class Reader {
  pos = 0;
  constructor(readonly buf: Uint8Array, readonly end = buf.length) {}

  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      // Numbers above 2^53 do not occur in the fields we read; keep the arithmetic in doubles.
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
      if (shift > 63) throw new Error('varint too long');
    }
  }

  bytes(): Uint8Array {
    const len = this.varint();
    if (this.pos + len > this.end) throw new Error('length-delimited field runs past the end');
    const out = this.buf.subarray(this.pos, this.pos + len);
    this.pos += len;
    return out;
  }

  float(): number {
    if (this.pos + 4 > this.end) throw new Error('truncated float');
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 4).getFloat32(0, true);
    this.pos += 4;
    return v;
  }

  skip(wireType: number): void {
    if (wireType === 0) this.varint();
    else if (wireType === 1) this.pos += 8;
    else if (wireType === 2) this.bytes();
    else if (wireType === 5) this.pos += 4;
    else throw new Error(`unsupported wire type ${wireType}`);
    if (this.pos > this.end) throw new Error('field runs past the end');
  }

  /** Calls fn(fieldNumber, wireType) for each field; fn must consume the value or return false. */
  fields(fn: (field: number, wire: number) => boolean): void {
    while (this.pos < this.end) {
      const key = this.varint();
      const field = Math.floor(key / 8);
      const wire = key & 7;
      if (!fn(field, wire)) this.skip(wire);
    }
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function readPiece(bytes: Uint8Array): ModelPiece {
  const r = new Reader(bytes);
  const p: ModelPiece = { piece: '', score: 0, type: PieceType.NORMAL };
  r.fields((f, w) => {
    if (f === 1 && w === 2) p.piece = utf8.decode(r.bytes());
    else if (f === 2 && w === 5) p.score = r.float();
    else if (f === 3 && w === 0) p.type = r.varint() as PieceType;
    else return false;
    return true;
  });
  return p;
}

function readNormalizer(bytes: Uint8Array | undefined): NormalizerInfo {
  // Defaults of sentencepiece_model.proto apply to absent fields.
  const n: NormalizerInfo = { name: '', addDummyPrefix: true, removeExtraWhitespaces: true, escapeWhitespaces: true };
  if (!bytes) return n;
  const r = new Reader(bytes);
  r.fields((f, w) => {
    if (f === 1 && w === 2) n.name = utf8.decode(r.bytes());
    else if (f === 3 && w === 0) n.addDummyPrefix = r.varint() !== 0;
    else if (f === 4 && w === 0) n.removeExtraWhitespaces = r.varint() !== 0;
    else if (f === 5 && w === 0) n.escapeWhitespaces = r.varint() !== 0;
    else return false;
    return true;
  });
  return n;
}

const MODEL_TYPES = { 1: 'unigram', 2: 'bpe', 3: 'word', 4: 'char' } as const;

function readTrainer(bytes: Uint8Array | undefined): TrainerInfo {
  const t: TrainerInfo = {
    modelType: 'unigram',
    vocabSize: 8000,
    splitDigits: false,
    byteFallback: false,
    splitByWhitespace: true,
    allowWhitespaceOnlyPieces: false,
  };
  if (!bytes) return t;
  const r = new Reader(bytes);
  r.fields((f, w) => {
    if (w !== 0) return false;
    if (f === 3) t.modelType = MODEL_TYPES[r.varint() as 1 | 2 | 3 | 4] ?? 'unknown';
    else if (f === 4) t.vocabSize = r.varint();
    else if (f === 22) t.splitByWhitespace = r.varint() !== 0;
    else if (f === 25) t.splitDigits = r.varint() !== 0;
    else if (f === 26) t.allowWhitespaceOnlyPieces = r.varint() !== 0;
    else if (f === 35) t.byteFallback = r.varint() !== 0;
    else return false;
    return true;
  });
  return t;
}

/** Parses a `.model` file's bytes; throws Error with a reason on a malformed file. */
export function parseModelProto(buf: Uint8Array): ModelInfo {
  const pieces: ModelPiece[] = [];
  let trainer: Uint8Array | undefined;
  let normalizer: Uint8Array | undefined;
  const r = new Reader(buf);
  r.fields((f, w) => {
    if (w !== 2) return false;
    if (f === 1) pieces.push(readPiece(r.bytes()));
    else if (f === 2) trainer = r.bytes();
    else if (f === 3) normalizer = r.bytes();
    else return false;
    return true;
  });
  if (pieces.length === 0) throw new Error('no pieces (not a sentencepiece model)');
  return { pieces, trainer: readTrainer(trainer), normalizer: readNormalizer(normalizer) };
}

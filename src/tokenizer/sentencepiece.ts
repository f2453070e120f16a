import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SentencePieceProcessor } from 'sentencepiece-js';
import { DOCUMENT_TOKENS, SPECIAL_TOKENS } from '../ndl/tokens';
import { UserError } from '../util/errors';
import { assetPath } from '../util/paths';
import { escapeForSpm, firstLoneSurrogate, unescapeFromSpm } from './escape';
import { ModelInfo, ModelPiece, parseModelProto, PieceType, TrainerInfo } from './model-proto';
import { EncodePool } from './encode-pool';
import type { BatchOptions, TextTokenizer } from './types';
import { modelProblems } from './validate';

/** The tokenizer shipped in the package, trained by `ndbg tokenizer train --config configs/tokenizer.json`. */
export const DEFAULT_TOKENIZER = 'tokenizer/ndbg-8k.model';

export function defaultTokenizerPath(): string {
  return assetPath(DEFAULT_TOKENIZER);
}

type IdsEncoder = (escapedText: string) => Uint32Array;
// Plain JS shared with the worker threads (see the file's header for why).
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { makeIdsEncoder } = require(assetPath('src/tokenizer/spm-encode.js')) as {
  makeIdsEncoder: (spp: SentencePieceProcessor) => IdsEncoder;
};


/**
 * ndbg's tokenizer: a sentencepiece model (run by sentencepiece-js, a wasm build) behind the
 * reversible escape layer of ./escape.ts. Guarantees, for every well-formed string x:
 *   decode(encode(x)) === x, and each NDL special token is exactly one id wherever it occurs.
 * See docs/tokenizer.md for the API contract.
 */
export class Tokenizer implements TextTokenizer {
  readonly vocabSize: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  readonly unkId: number;
  private readonly pieceIds: Map<string, number>;
  private pool?: EncodePool;
  private readonly encodeEscaped: IdsEncoder;

  private constructor(
    /** Absolute path of the .model file. */
    readonly modelPath: string,
    /** sha256 (hex) of the .model file's bytes: the tokenizer's identity in data manifests. */
    readonly sha256: string,
    private readonly info: ModelInfo,
    private readonly spp: SentencePieceProcessor,
  ) {
    this.vocabSize = info.pieces.length;
    this.pieceIds = new Map(info.pieces.map((p, id) => [p.piece, id]));
    this.bosId = this.idOf(DOCUMENT_TOKENS.begin);
    this.eosId = this.idOf(DOCUMENT_TOKENS.end);
    this.padId = this.idOf(DOCUMENT_TOKENS.pad);
    this.unkId = info.pieces.findIndex((p) => p.type === PieceType.UNKNOWN);
    this.encodeEscaped = makeIdsEncoder(spp);
  }

  /**
   * Reads and validates a `.model` file. Rejects (UserError naming the file) a missing or
   * corrupt file, and a model whose special tokens, normalizer or byte fallback do not match
   * what ndbg needs (src/tokenizer/validate.ts).
   */
  static async load(modelPath: string = defaultTokenizerPath()): Promise<Tokenizer> {
    const file = path.resolve(modelPath);
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(file);
    } catch (e) {
      throw new UserError(`cannot read tokenizer ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    let info: ModelInfo;
    try {
      info = parseModelProto(bytes);
    } catch (e) {
      throw new UserError(`tokenizer ${file} is not a sentencepiece model: ${(e as Error).message}`);
    }
    const problems = modelProblems(info, SPECIAL_TOKENS);
    if (problems.length) {
      throw new UserError(
        `tokenizer ${file} does not match the NDL spec (src/ndl/tokens.ts):\n  ${problems.join('\n  ')}\n` +
          `retrain it with \`ndbg tokenizer train --config configs/tokenizer.json\``,
      );
    }
    const spp = new SentencePieceProcessor();
    await spp.load(file);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    return new Tokenizer(file, sha256, info, spp);
  }

  /** The ids of one text. Throws on a string with a lone surrogate (it has no UTF-8 form). */
  encode(text: string): number[] {
    return Array.from(this.encodeIds(text));
  }

  /** encode() as a Uint32Array (no conversion to a JS array). */
  encodeIds(text: string): Uint32Array {
    checkWellFormed(text);
    return this.encodeEscaped(escapeForSpm(text));
  }

  /** Inverse of encode; ids must be in [0, vocabSize). */
  decode(ids: ArrayLike<number>): string {
    const list = Array.from(ids);
    for (const id of list) {
      if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
        throw new RangeError(`Tokenizer.decode: id ${id} is outside [0, ${this.vocabSize})`);
      }
    }
    return unescapeFromSpm(this.spp.decodeIds(list));
  }

  /** The pieces of a text as sentencepiece sees them (escaped form: ▁ is a space, U+E00A a newline). */
  pieces(text: string): string[] {
    checkWellFormed(text);
    return this.spp.encodePieces(escapeForSpm(text));
  }

  /** The model's piece table, by id (escaped form), for PieceDropout. */
  get modelPieces(): readonly ModelPiece[] {
    return this.info.pieces;
  }

  /** Id of a piece, e.g. idOf('<|frame_sep|>'). Throws if the model has no such piece. */
  idOf(token: string): number {
    const id = this.pieceIds.get(token);
    if (id === undefined) throw new Error(`tokenizer ${this.modelPath} has no piece ${JSON.stringify(token)}`);
    return id;
  }

  /** The piece string of an id (escaped form). */
  pieceOf(id: number): string {
    const p = this.info.pieces[id];
    if (!p) throw new RangeError(`Tokenizer.pieceOf: id ${id} is outside [0, ${this.vocabSize})`);
    return p.piece;
  }

  /** Every NDL special token with its id, in SPECIAL_TOKENS order. */
  specialTokenIds(): Record<string, number> {
    return Object.fromEntries(SPECIAL_TOKENS.map((t) => [t, this.idOf(t)]));
  }

  /** What the model was trained with (read from the file). */
  get trainer(): TrainerInfo {
    return { ...this.info.trainer };
  }

  /**
   * Encodes many texts across worker threads; result i equals encode(texts[i]) (as a
   * Uint32Array view). Workers start on first use and are reused until close().
   */
  async encodeBatch(texts: string[], opts: BatchOptions = {}): Promise<Uint32Array[]> {
    const workers = opts.workers ?? Math.min(4, os.availableParallelism?.() ?? os.cpus().length);
    texts.forEach(checkWellFormed);
    if (workers <= 0) return texts.map((t) => this.encodeEscaped(escapeForSpm(t)));
    if (!this.pool || !this.pool.usable || this.pool.size !== workers) {
      await this.pool?.close();
      this.pool = new EncodePool(this.modelPath, workers);
    }
    return this.pool.encode(texts.map(escapeForSpm));
  }

  /** Stops the worker threads (if any). The tokenizer stays usable on the calling thread. */
  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.close();
  }
}

function checkWellFormed(text: string): void {
  if (typeof text !== 'string') throw new TypeError(`Tokenizer: expected a string, got ${typeof text}`);
  const at = firstLoneSurrogate(text);
  if (at >= 0) {
    throw new UserError(`Tokenizer: text has a lone surrogate at index ${at} (not valid unicode; cannot be encoded)`);
  }
}

/**
 * What the stages after the tokenizer need of one: the sentencepiece Tokenizer (sentencepiece.ts)
 * and the built-in ByteTokenizer (byte-tokenizer.ts) both satisfy it.
 */
export interface BatchOptions {
  /** Worker threads; 0 encodes on the calling thread. Default: min(4, available cores). */
  workers?: number;
}

export interface TextTokenizer {
  encode(text: string): ArrayLike<number>;
  /** Many texts at once (on worker threads where the tokenizer has them); result i is encode(texts[i]). */
  encodeBatch(texts: string[], opts?: BatchOptions): Promise<ArrayLike<number>[]>;
  decode(ids: ArrayLike<number>): string;
  readonly vocabSize: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  /** Id of a special token such as `<|frame_sep|>` (may return undefined or throw when absent). */
  idOf?(token: string): number | undefined;
  /** sha256 (hex) of the tokenizer model: what makes two builds' token ids comparable. */
  readonly sha256: string;
  /** Stops worker threads, if any; the tokenizer stays usable on the calling thread. */
  close(): Promise<void>;
}

/** How a tokenizer is named on the command line and in manifests: `byte` or a model file path. */
export type TokenizerSpec = string;

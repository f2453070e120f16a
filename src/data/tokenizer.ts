/**
 * The data stage needs only this much of a tokenizer. The project's sentencepiece Tokenizer
 * (src/tokenizer) satisfies it structurally; ByteTokenizer (byte-tokenizer.ts) is a built-in,
 * dependency-free one for tests, benchmarks and quick experiments (`--tokenizer byte`).
 */
import * as fs from 'fs';
import { UserError } from '../util/errors';
import { Tokenizer } from '../tokenizer';
import { ByteTokenizer, BYTE_TOKENIZER_NAME } from './byte-tokenizer';

export interface TextTokenizer {
  encode(text: string): ArrayLike<number>;
  decode(ids: ArrayLike<number>): string;
  readonly vocabSize: number;
  readonly bosId: number;
  readonly eosId: number;
  readonly padId: number;
  /** Id of a special token such as `<|frame_sep|>` (may return undefined or throw when absent). */
  idOf?(token: string): number | undefined;
  /** sha256 (hex) of the tokenizer model: what makes two builds' token ids comparable. */
  readonly sha256: string;
}

/** What a worker thread needs to rebuild the same tokenizer: `byte` or a model file path. */
export type TokenizerSpec = string;

/** Loads `byte` (the built-in byte tokenizer) or a sentencepiece model file through src/tokenizer. */
export async function loadTextTokenizer(spec: TokenizerSpec): Promise<TextTokenizer> {
  if (spec === BYTE_TOKENIZER_NAME) return new ByteTokenizer();
  if (!fs.existsSync(spec)) throw new UserError(`tokenizer model ${spec} not found (or use --tokenizer byte)`);
  return await Tokenizer.load(spec);
}

/** Id of a special token, or undefined when the tokenizer lacks it as a single id. */
export function specialId(tok: TextTokenizer, token: string): number | undefined {
  if (tok.idOf) {
    try {
      const id = tok.idOf(token);
      return id === undefined || id < 0 ? undefined : id;
    } catch {
      return undefined; // src/tokenizer's idOf throws for a piece the model lacks
    }
  }
  const ids = tok.encode(token);
  return ids.length === 1 ? ids[0] : undefined;
}

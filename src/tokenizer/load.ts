/**
 * Opening a tokenizer by its spec: `byte` (the built-in byte tokenizer, dependency free, for
 * tests, benchmarks and quick experiments) or a sentencepiece model file.
 */
import * as fs from 'fs';
import { UserError } from '../util/errors';
import { BYTE_TOKENIZER_NAME, ByteTokenizer } from './byte-tokenizer';
import { Tokenizer } from './sentencepiece';
import type { TextTokenizer, TokenizerSpec } from './types';

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
      return undefined; // the sentencepiece Tokenizer's idOf throws for a piece the model lacks
    }
  }
  const ids = tok.encode(token);
  return ids.length === 1 ? ids[0] : undefined;
}

/**
 * The tokenizer stage: sentencepiece training and loading behind a reversible escape layer
 * (docs/tokenizer.md), the built-in byte tokenizer, and the one worker pool that encodes
 * batches of documents.
 */
export { Tokenizer, DEFAULT_TOKENIZER, defaultTokenizerPath } from './sentencepiece';
export { ByteTokenizer, BYTE_TOKENIZER_NAME } from './byte-tokenizer';
export { loadTextTokenizer, specialId } from './load';
export type { BatchOptions, TextTokenizer, TokenizerSpec } from './types';

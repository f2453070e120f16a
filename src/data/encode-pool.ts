/**
 * Transitional (issue 17): build.ts still names the document encoder by its old name; it moves
 * to ./encode.ts's DocumentEncoder, and this file goes, once the context-fit work there lands.
 */
import type { TextTokenizer } from '../tokenizer';
import { DocumentEncoder } from './encode';
import type { MaskOptions } from './pack';

export type EncodePool = DocumentEncoder;
export const EncodePool = {
  create: async (_spec: string, tok: TextTokenizer, mask: MaskOptions, workers: number): Promise<DocumentEncoder> =>
    new DocumentEncoder(tok, mask, workers),
};

/** Types for the parts of sentencepiece-js 1.1 (a wasm build of sentencepiece) that ndbg uses. */
declare module 'sentencepiece-js' {
  export class SentencePieceProcessor {
    /** Compiles a fresh wasm instance and loads the model; the load status is NOT checked. */
    load(modelPath: string): Promise<void>;
    encodeIds(text: string): number[];
    encodePieces(text: string): string[];
    decodeIds(ids: number[]): string;
  }
}


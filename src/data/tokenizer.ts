/** Transitional (issue 17): the tokenizer loading moved to src/tokenizer; this re-export goes once pack.ts and build.ts import from there. */
export { loadTextTokenizer, specialId, type TextTokenizer } from '../tokenizer';

import * as fs from 'fs';
import { DOCUMENT_TOKENS, SPECIAL_TOKENS } from '../ndl/tokens';
import { ESCAPE, ESCAPE_SCHEME, NEWLINE } from '../tokenizer/escape';
import { ModelInfo, parseModelProto, PieceType } from '../tokenizer/model-proto';
import { UserError } from '../util/errors';

/**
 * The Hugging Face files of an ndbg tokenizer: `tokenizer.json` (a `tokenizers` fast tokenizer
 * that gives ndbg's ids exactly), `tokenizer_config.json` and `special_tokens_map.json`, so that
 * `AutoTokenizer.from_pretrained(dir)` works as-is.
 *
 * How it reproduces `Tokenizer.encode` (src/tokenizer/index.ts):
 * - the NDL tokens are added special tokens matched on the raw text (sentencepiece matches them
 *   as user-defined symbols before segmenting, so both split the text at the same places);
 * - the normalizer is ndbg's escape layer (src/tokenizer/escape.ts) followed by sentencepiece's
 *   own whitespace escape (space → ▁), as plain string replacements in an order that never
 *   re-escapes what an earlier step produced; no dummy prefix, no whitespace pre-splitting
 *   (the model was trained with add_dummy_prefix=false and split_by_whitespace=false);
 * - the model is sentencepiece's unigram table (same pieces, same scores, byte fallback).
 *   Pieces sentencepiece never matches in text (<unk>, the <0xNN> byte pieces) get a very low
 *   score: `tokenizers` puts every vocabulary entry in its trie, so a literal "<0x41>" in a
 *   document would otherwise become the byte piece. That lowers the unknown-character score
 *   by a constant, which every segmentation of a text pays equally often, so the best
 *   segmentation does not change.
 * The decoder undoes both layers; escape pairs are first rewritten into pairs that cannot occur
 * in escaped text (ESCAPE + U+E001 / U+E003), so that a fixed-string replacement never
 * consumes half of a neighbouring pair.
 */
export const HF_TOKENIZER_FILES = ['tokenizer.json', 'tokenizer_config.json', 'special_tokens_map.json'] as const;

const UNMATCHABLE_SCORE = -1e4;
const SPACE_MARK = '\u2581';
const SPACE_MARK_ESCAPED = '\uE081';
const MARK_ESCAPED_ESCAPE = '\uE001';
const MARK_ESCAPED_NEWLINE = '\uE003';

function replace(from: string, to: string): Record<string, unknown> {
  return { type: 'Replace', pattern: { String: from }, content: to };
}

export interface HfTokenizerFiles {
  'tokenizer.json': Record<string, unknown>;
  'tokenizer_config.json': Record<string, unknown>;
  'special_tokens_map.json': Record<string, unknown>;
}

/** Builds the three files from a sentencepiece `.model` (already validated by Tokenizer.load). */
export function hfTokenizerFiles(modelFile: string, maxLength: number): HfTokenizerFiles {
  let info: ModelInfo;
  try {
    info = parseModelProto(fs.readFileSync(modelFile));
  } catch (e) {
    throw new UserError(`tokenizer ${modelFile}: cannot read it as a sentencepiece model: ${(e as Error).message}`);
  }
  if (info.trainer.modelType !== 'unigram') {
    throw new UserError(`tokenizer ${modelFile}: export to Hugging Face supports unigram models, this one is ${info.trainer.modelType}`);
  }
  if (info.normalizer.addDummyPrefix || info.normalizer.removeExtraWhitespaces || !info.normalizer.escapeWhitespaces) {
    throw new UserError(`tokenizer ${modelFile}: its normalizer is not ndbg's (no dummy prefix, whitespace kept, spaces as ▁)`);
  }
  const unkId = info.pieces.findIndex((p) => p.type === PieceType.UNKNOWN);
  const ids = new Map(info.pieces.map((p, id) => [p.piece, id]));
  const special = SPECIAL_TOKENS.map((t) => {
    const id = ids.get(t);
    if (id === undefined) throw new UserError(`tokenizer ${modelFile} has no piece ${t}`);
    return { id, content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
  });
  const vocab = info.pieces.map((p) => [
    p.piece,
    p.type === PieceType.NORMAL || p.type === PieceType.USER_DEFINED ? p.score : UNMATCHABLE_SCORE,
  ]);

  const tokenizerJson = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: special,
    normalizer: {
      type: 'Sequence',
      normalizers: [
        replace(ESCAPE, ESCAPE + ESCAPE),
        replace(NEWLINE, ESCAPE + NEWLINE),
        replace(SPACE_MARK, ESCAPE + SPACE_MARK_ESCAPED),
        replace('\n', NEWLINE),
        replace(' ', SPACE_MARK),
      ],
    },
    pre_tokenizer: null,
    post_processor: null,
    decoder: {
      type: 'Sequence',
      decoders: [
        replace(SPACE_MARK, ' '),
        { type: 'ByteFallback' },
        { type: 'Fuse' },
        replace(ESCAPE + ESCAPE, ESCAPE + MARK_ESCAPED_ESCAPE),
        replace(ESCAPE + SPACE_MARK_ESCAPED, SPACE_MARK),
        replace(ESCAPE + NEWLINE, ESCAPE + MARK_ESCAPED_NEWLINE),
        replace(NEWLINE, '\n'),
        replace(ESCAPE + MARK_ESCAPED_NEWLINE, NEWLINE),
        replace(ESCAPE + MARK_ESCAPED_ESCAPE, ESCAPE),
      ],
    },
    model: { type: 'Unigram', unk_id: unkId >= 0 ? unkId : null, vocab, byte_fallback: true },
  };

  const others = SPECIAL_TOKENS.filter((t) => t !== DOCUMENT_TOKENS.begin && t !== DOCUMENT_TOKENS.end && t !== DOCUMENT_TOKENS.pad);
  const named = { bos_token: DOCUMENT_TOKENS.begin, eos_token: DOCUMENT_TOKENS.end, pad_token: DOCUMENT_TOKENS.pad };
  const tokenizerConfig = {
    tokenizer_class: 'PreTrainedTokenizerFast',
    ...named,
    // No unk_token: declaring "<unk>" would make transformers add it as a token matched in text.
    additional_special_tokens: others,
    added_tokens_decoder: Object.fromEntries(special.map(({ id, ...t }) => [String(id), t])),
    add_bos_token: false,
    add_eos_token: false,
    clean_up_tokenization_spaces: false,
    model_max_length: maxLength,
    padding_side: 'right',
    ndbg_escape: ESCAPE_SCHEME,
  };
  const tok = (content: string) => ({ content, single_word: false, lstrip: false, rstrip: false, normalized: false });
  const specialTokensMap = {
    bos_token: tok(named.bos_token),
    eos_token: tok(named.eos_token),
    pad_token: tok(named.pad_token),
    additional_special_tokens: others,
  };
  return { 'tokenizer.json': tokenizerJson, 'tokenizer_config.json': tokenizerConfig, 'special_tokens_map.json': specialTokensMap };
}

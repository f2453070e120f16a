import { SPECIAL_TOKENS } from '../ndl/tokens';
import { NEWLINE } from './escape';
import { ModelInfo, PieceType } from './model-proto';

/**
 * The checks a `.model` must pass before ndbg uses it. Each returns a list of problems (empty
 * when fine) so that one error message can name all of them.
 *
 * - The user-defined pieces are exactly SPECIAL_TOKENS, in that order: every NDL token is one
 *   id, and the ids are the same in every ndbg tokenizer's first block. The one other allowed
 *   is the escaped newline right after them (the `newlinePiece` setting).
 * - The normalizer is the identity without a dummy prefix or whitespace cleanup: anything
 *   else changes the text, and decode(encode(x)) == x would not hold.
 * - Byte fallback is on (256 byte pieces), so no character ever becomes <unk>.
 */
export function modelProblems(info: ModelInfo, expected: readonly string[] = SPECIAL_TOKENS): string[] {
  const problems: string[] = [];
  const userDefined = info.pieces.filter((p) => p.type === PieceType.USER_DEFINED).map((p) => p.piece);
  if (userDefined[userDefined.length - 1] === NEWLINE) userDefined.pop();
  const byPiece = new Map(info.pieces.map((p, id) => [p.piece, { ...p, id }]));

  const missing = expected.filter((t) => !byPiece.has(t));
  const wrongType = expected.filter((t) => byPiece.has(t) && byPiece.get(t)!.type !== PieceType.USER_DEFINED);
  const extra = userDefined.filter((t) => !expected.includes(t));
  if (missing.length) problems.push(`missing special tokens: ${missing.join(' ')}`);
  if (wrongType.length) {
    problems.push(
      `special tokens that are not user-defined symbols (they would be split or never produced): ${wrongType.join(' ')}`,
    );
  }
  if (extra.length) problems.push(`user-defined symbols not in src/ndl/tokens.ts: ${extra.join(' ')}`);
  if (!missing.length && !wrongType.length && !extra.length) {
    const order = userDefined.join(' ');
    if (order !== expected.join(' ')) problems.push('special tokens are not in the order of SPECIAL_TOKENS');
  }

  const n = info.normalizer;
  if (n.name !== 'identity') problems.push(`normalizer is "${n.name}", expected "identity" (exact round trip)`);
  if (n.addDummyPrefix) problems.push('add_dummy_prefix is on (a leading space would be added)');
  if (n.removeExtraWhitespaces) problems.push('remove_extra_whitespaces is on (indentation would be lost)');

  const bytes = info.pieces.filter((p) => p.type === PieceType.BYTE).length;
  if (bytes !== 256) problems.push(`byte fallback is off (${bytes} byte pieces, expected 256)`);
  return problems;
}

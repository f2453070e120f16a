/**
 * The one answer to "does it fit?" for every eval that puts text in front of a model:
 * next-state tasks and CruxEval (tasks.ts fitsBudget), horizon and the model completer
 * (answerRoom, via PromptTooLongError), the copy probe and teacher-forced SRC tokens
 * (fitsRow), and the REPL session's re-anchoring (fitsPrompt).
 *
 * The rule is the training row's: a model trained at context T (`seqLen`) saw rows of
 * rowLen = T+1 tokens, reading the first T and predicting tokens 1..T. So a sequence fits
 * when it is at most one row long: prompt plus the answer the model writes (or is scored
 * on), of which the last token is only ever predicted, never read. T is the sequence length
 * the checkpoint was trained at (src/model/checkpoint.ts checkpointSeqLen), not the model's
 * max_seq_len.
 */
import { rowLenOf } from '../data/batch';

/** What a prompt may hold: the context T the model was trained at and a token counter for NDL text. */
export interface PromptBudget {
  /** T: the context the checkpoint was trained at; a prompt and its answer fit in T+1 tokens. */
  seqLen: number;
  countTokens: (text: string) => number;
  /** The longest answer the completer writes (its maxNewTokens); a longer true answer could never be matched. */
  maxAnswerTokens?: number;
}

/** Tokens a model may write after a prompt of `promptTokens` tokens; below 1, the prompt cannot be answered. */
export function answerRoom(budget: Pick<PromptBudget, 'seqLen'>, promptTokens: number): number {
  return rowLenOf(budget.seqLen) - promptTokens;
}

/** Whether a sequence of `tokens` tokens (whose last is only a target) fits: at most one training row. */
export function fitsRow(budget: Pick<PromptBudget, 'seqLen'>, tokens: number): boolean {
  return answerRoom(budget, tokens) >= 0;
}

/** Whether `prompt` leaves `room` tokens for what comes after it. */
export function fitsPrompt(budget: PromptBudget, prompt: string, room: number): boolean {
  return fitsRow(budget, budget.countTokens(prompt) + room);
}

/**
 * Tokens kept free for a model's next frame when a prompt grows by the model's own answers (a
 * REPL session, a walked jump): 64, or a quarter of a small context (so a tiny model is not cut
 * short on every step). The next frame's length is not known, so this room is kept instead.
 */
export function nextFrameRoom(budget: Pick<PromptBudget, 'seqLen'>): number {
  return Math.min(64, Math.floor(budget.seqLen / 4));
}

/** The longest sequence length n with fitsRow(budget, n) (the copy probe sizes its rows by it). */
export function longestRow(budget: Pick<PromptBudget, 'seqLen'>): number {
  return answerRoom(budget, 0);
}

/**
 * The NDL special tokens (spec ndl.md §1), the single list that the tokenizer, formatter,
 * parser and evaluator import. Each is one id in the tokenizer and never split. The event,
 * action and exit tokens are built from the debugger's vocabulary (src/debugger/vocabulary.ts),
 * which is re-exported here for the stages after ndl.
 */
import {
  EXIT_KINDS,
  FORWARD_ACTIONS,
  FORWARD_EVENTS,
  INVERSE_ACTIONS,
  INVERSE_EVENTS,
  type ActionKind,
  type ExitKind,
  type NdlEvent,
} from '../debugger/vocabulary';

export * from '../debugger/vocabulary';

export const DOCUMENT_TOKENS = {
  begin: '<|begin_of_text|>',
  end: '<|end_of_text|>',
  pad: '<|pad|>',
} as const;

export const STRUCTURE_TOKENS = {
  traceContextStart: '<|trace_context_start|>',
  frameSep: '<|frame_sep|>',
  srcSep: '<|src_sep|>',
  argSep: '<|arg_sep|>',
  actionSep: '<|action_sep|>',
  traceEnd: '<|trace_end|>',
} as const;

/** `<|call_sep|>` for 'call', `<|inv_line_call_sep|>` for 'inv_line_call', ... */
export function eventToken(event: NdlEvent): string {
  return `<|${event}_sep|>`;
}

export function actionToken(action: ActionKind): string {
  return `<|${action}|>`;
}

export function exitToken(kind: ExitKind): string {
  return kind === 'inv_exit_entry' ? '<|inv_exit_entry|>' : `<|exit_${kind}|>`;
}

/** All special tokens in a fixed order (the order the tokenizer assigns user-defined ids). */
export const SPECIAL_TOKENS: readonly string[] = [
  DOCUMENT_TOKENS.begin,
  DOCUMENT_TOKENS.end,
  DOCUMENT_TOKENS.pad,
  STRUCTURE_TOKENS.traceContextStart,
  STRUCTURE_TOKENS.frameSep,
  STRUCTURE_TOKENS.srcSep,
  STRUCTURE_TOKENS.argSep,
  STRUCTURE_TOKENS.actionSep,
  STRUCTURE_TOKENS.traceEnd,
  ...FORWARD_EVENTS.map(eventToken),
  ...INVERSE_EVENTS.map(eventToken),
  ...FORWARD_ACTIONS.map(actionToken),
  ...INVERSE_ACTIONS.map(actionToken),
  ...EXIT_KINDS.map(exitToken),
];

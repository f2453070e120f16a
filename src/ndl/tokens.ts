/**
 * The NDL special tokens (spec ndl.md §1), the single list that the tokenizer, formatter,
 * parser and evaluator import. Each is one id in the tokenizer and never split.
 */
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

export const FORWARD_EVENTS = ['call', 'line', 'return', 'exception'] as const;
export const INVERSE_EVENTS = ['inv_call', 'inv_line', 'inv_line_call', 'inv_return', 'inv_exception'] as const;
export type ForwardEvent = (typeof FORWARD_EVENTS)[number];
export type InverseEvent = (typeof INVERSE_EVENTS)[number];
export type NdlEvent = ForwardEvent | InverseEvent;

export const FORWARD_ACTIONS = ['step_into', 'step_over', 'step_return', 'breakpoint', 'continue'] as const;
export const INVERSE_ACTIONS = ['inv_step_into', 'inv_step_over', 'inv_step_call'] as const;
export type ForwardActionKind = (typeof FORWARD_ACTIONS)[number];
export type InverseActionKind = (typeof INVERSE_ACTIONS)[number];
export type ActionKind = ForwardActionKind | InverseActionKind;

export const EXIT_KINDS = ['normal', 'error', 'never', 'inv_exit_entry'] as const;
export type ExitKind = (typeof EXIT_KINDS)[number];

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

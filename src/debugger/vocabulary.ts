/**
 * The debugger's vocabulary (spec ndl.md §2, §4): the events a state-tree node can be, the
 * actions a user can take, how a run exits, and the two directions a tree is walked. The oracle
 * defines these; src/ndl/tokens.ts builds the NDL token strings from them.
 */
export const FORWARD_EVENTS = ['call', 'line', 'return', 'exception'] as const;
export const INVERSE_EVENTS = ['inv_call', 'inv_line', 'inv_line_call', 'inv_return', 'inv_exception'] as const;
export type ForwardEvent = (typeof FORWARD_EVENTS)[number];
export type InverseEvent = (typeof INVERSE_EVENTS)[number];
export type NdlEvent = ForwardEvent | InverseEvent;

/** Events whose frame shows a VALUE (the return value or exception) instead of LOCALS. */
export function showsValue(event: string): boolean {
  return event === 'return' || event === 'exception' || event === 'inv_return' || event === 'inv_exception';
}

export const FORWARD_ACTIONS = ['step_into', 'step_over', 'step_return', 'breakpoint', 'continue'] as const;
export const INVERSE_ACTIONS = ['inv_step_into', 'inv_step_over', 'inv_step_call'] as const;
export type ForwardActionKind = (typeof FORWARD_ACTIONS)[number];
export type InverseActionKind = (typeof INVERSE_ACTIONS)[number];
export type ActionKind = ForwardActionKind | InverseActionKind;

/** normal/error/never end a forward run; inv_exit_entry is reached walking back past the entry call. */
export const EXIT_KINDS = ['normal', 'error', 'never', 'inv_exit_entry'] as const;
export type ExitKind = (typeof EXIT_KINDS)[number];

/** A state tree is walked forward (execution order) or inverse (backwards from the entry's return). */
export const DIRECTIONS = ['forward', 'inverse'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/**
 * The state tree and action types shared by the oracle (src/debugger), the NDL formatter,
 * sampler and parser (src/ndl) and the evaluator (src/eval). Spec: ndl.md §4.
 */
import type { ActionKind, Direction, ExitKind, NdlEvent } from './vocabulary';

export interface StateNode {
  /** Position in StateTree.nodes. */
  index: number;
  /** Forward trees use call/line/return/exception; inverse trees the inv_* events. */
  event: NdlEvent;
  depth: number;
  invocation: number;
  line: number;
  /** Source line text; the `def` line for (inv_)call nodes. */
  src: string;
  /** The frame's locals (repr strings, f_locals order); every node carries them, also return/exception nodes. */
  locals: Record<string, string>;
  /** repr of the return value or exception for (inv_)return/(inv_)exception nodes; null otherwise and for a return caused by an exception. */
  value: string | null;
  /** Index of the TraceEvent this node was built from (inv_line_call copies point at the same line event). */
  traceIndex: number;
}

export interface Action {
  kind: ActionKind;
  /** Breakpoint target: the SRC text of the line (only for kind 'breakpoint'). */
  target?: string;
}

/** The virtual node after the last one (or before the entry's call, in an inverse tree). */
export const EXIT = -1;

export interface StateTree {
  direction: Direction;
  nodes: StateNode[];
  /** How EXIT is reached: normal/error/never for forward trees, inv_exit_entry for inverse ones. */
  exitKind: ExitKind;
  /**
   * The CONTEXT text that the nodes' line numbers refer to (forward: with `main`). Always set by
   * buildForwardTree/buildInverseTree; optional only so that hand-made trees in tests stay valid.
   */
  context?: string;
  /**
   * The statement lines inside the program's functions (see source.ts `statementLines`): the
   * breakpoint targets that may never be reached. Set by the builders like `context`.
   */
  statementLines?: Array<{ line: number; src: string }>;
}

/**
 * The state tree and action types shared by the oracle (src/debugger), the NDL formatter,
 * sampler and parser (src/ndl) and the evaluator (src/eval). Spec: ndl.md §4.
 */
import type { TraceEvent } from '../trace/types';
import type { ActionKind, Direction, ExitKind, NdlEvent } from './vocabulary';

/**
 * One state: the frame of the trace event it was built from (depth, invocation, line, src,
 * locals, value: src/trace/types.ts; every node carries its locals, also return/exception nodes,
 * and `value` is set on (inv_)return/(inv_)exception nodes only), under the tree's own event.
 */
export interface StateNode extends Pick<TraceEvent, 'depth' | 'invocation' | 'line' | 'src' | 'locals' | 'value'> {
  /** Position in StateTree.nodes. */
  index: number;
  /** Forward trees use call/line/return/exception; inverse trees the inv_* events. */
  event: NdlEvent;
  /** Index of the TraceEvent this node was built from (inv_line_call copies point at the same line event). */
  traceIndex: number;
  /** Repository-level trees only: the node's file, relative to the repository root. */
  file?: string;
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
  statementLines?: Array<{ line: number; src: string; file?: string }>;
}

/**
 * The NDL stage's own types: a trajectory through a state tree (what the sampler draws and the
 * formatter writes) and the frames the parser reads back.
 */
import type { Action, Direction, ExitKind, NdlEvent } from '../debugger';

/** One written frame: the node shown and the action taken from it. */
export interface TrajectoryStep {
  node: number;
  /** Absent only on the last step of a trajectory cut by a budget (that frame has no action). */
  action?: Action;
}

/**
 * A walk through one StateTree. `end: 'exit'` means the last step's action leads to EXIT (the
 * document then writes the tree's exit token); `end: 'budget'` means the walk was cut by the
 * frame or token budget: the last frame is written with an empty ACTION, i.e.
 * `<|action_sep|><|trace_end|>`, so that every action in a document is followed by its result.
 */
export interface Trajectory {
  direction: Direction;
  steps: TrajectoryStep[];
  end: 'exit' | 'budget';
}

/** A frame read back from NDL text. */
export interface ParsedFrame {
  event: NdlEvent;
  src: string;
  /** LOCALS exactly as written, in order, without the `".."` marker; undefined for VALUE frames. */
  shown?: Array<[string, string]>;
  /** The LOCALS held the `"..": ".."` marker (some unchanged variables were left out). */
  elided: boolean;
  /** VALUE of a return/exception frame (null: a return caused by an exception); undefined otherwise. */
  value?: string | null;
  /**
   * The full locals reconstructed from the history (delta resolution). Undefined for VALUE
   * frames (their locals are not written). Deleted variables are not marked in a delta (spec
   * §3), so a resolved dict may still hold a variable the program no longer has.
   */
  locals?: Record<string, string>;
  /**
   * True when every variable the delta left out was resolved from a frame the document shows
   * (a chain of LOCALS frames back to a full dict). False when the delta's base is a state the
   * document never shows (the locals at a return or exception frame): then `locals` holds only
   * what is known.
   */
  exact: boolean;
  /** The action taken from this frame; undefined when the text ends before it or the frame has none. */
  action?: Action;
}

export interface ParsedExit {
  exit: ExitKind;
}

export interface ParsedDocument {
  direction: Direction | undefined;
  /** The CONTEXT text (program code, plus `main` for forward documents). */
  context: string;
  frames: ParsedFrame[];
  /** Set when the document reached an EXIT token. */
  exit?: ExitKind;
  /** `<|trace_end|>` was read (with or without an exit: a budget-cut document has none). */
  complete: boolean;
  /** First problem met; everything before it is in `frames`. Undefined for a well-formed document. */
  error?: string;
}

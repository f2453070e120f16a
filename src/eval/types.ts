/**
 * Evaluation types: a task is an NDL prefix that ends right after an action, plus the true next
 * frame (or exit) that the oracle says the action leads to.
 */
import type { Action, StateTree } from '../debugger/types';
import type { ExitKind } from '../ndl/tokens';
import type { ParsedFrame } from '../ndl/types';
import type { TraceRecord } from '../trace/types';

/** What comes after an action: a frame, or an exit token. */
export type Outcome =
  | { frame: ParsedFrame; exit?: undefined; error?: undefined }
  | { exit: ExitKind; frame?: undefined; error?: undefined };

/** A prediction: an outcome, or the reason the model's text could not be read as one. */
export type Prediction = Outcome | { error: string; frame?: undefined; exit?: undefined };

export interface NextStateTask {
  /** `${traceId}/${action}/${k}` */
  id: string;
  traceId: string;
  action: Action;
  /** Document text up to and including the action (and its breakpoint target). */
  prefix: string;
  truth: Outcome;
  /** The node the action was taken from and the tree it lives in (the baseline reads them). */
  node: number;
  tree: StateTree;
  trace: TraceRecord;
}

/** Something that continues an NDL prefix with the next frame (a model, the oracle, a baseline). */
export interface FramePredictor {
  readonly name: string;
  predict(task: NextStateTask, options?: PredictOptions): Promise<Prediction>;
  /** predict for many tasks at once, in order (a model decodes them as batches). */
  predictMany?(tasks: NextStateTask[], options?: PredictOptions): Promise<Prediction[]>;
}

export interface PredictOptions {
  /** 0 or undefined: greedy. */
  temperature?: number;
  topP?: number;
  seed?: number;
}

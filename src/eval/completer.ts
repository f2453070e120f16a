/**
 * The boundary between evaluation and the model: a TextCompleter continues an NDL prefix with
 * the next frame (up to and including its `<|action_sep|>`, or an exit). Everything the
 * evaluator knows about models goes through this interface, so the scoring is tested with the
 * oracle and with corrupted outputs, and the model side with its own tests.
 */
import { parseNextFrame } from '../ndl/parse';
import type { PromptBudget } from './budget';
import type { FramePredictor, NextStateTask, PredictOptions, Prediction } from './types';

export type { PromptBudget } from './budget';


/** A prompt that does not fit the model's context (budget.ts answerRoom < 1); the caller counts it as did_not_fit. */
export class PromptTooLongError extends Error {
  constructor(readonly tokens: number, readonly seqLen: number) {
    super(`prompt of ${tokens} tokens leaves no room for an answer in a context of ${seqLen}`);
  }
}

export interface TextCompleter {
  readonly name: string;
  /** How an unsampled answer is decoded (`greedy`, `4-beam search`); the oracle has none. */
  readonly decoding?: string;
  /** The context a prompt must fit (a model has one; the oracle does not). */
  readonly budget?: PromptBudget;
  /** The continuation text after `prefix` (the next frame; see above). */
  completeFrame(prefix: string, options?: PredictOptions): Promise<string>;
  /** completeFrame for many prefixes at once, in order (a model decodes them as batches). */
  completeFrames?(prefixes: string[], options?: PredictOptions): Promise<string[]>;
}

/** Reads a continuation as the next frame after `prefix`; unreadable text becomes an error value. */
export function readPrediction(prefix: string, continuation: string): Prediction {
  const r = parseNextFrame(prefix, continuation);
  if (!r.ok) return { error: r.error };
  if ('exit' in r && r.exit !== undefined) return { exit: r.exit };
  return { frame: r.frame };
}

export class CompleterPredictor implements FramePredictor {
  constructor(private readonly completer: TextCompleter) {}
  get name(): string {
    return this.completer.name;
  }
  async predict(task: NextStateTask, options?: PredictOptions): Promise<Prediction> {
    return readPrediction(task.prefix, await this.completer.completeFrame(task.prefix, options));
  }
  async predictMany(tasks: NextStateTask[], options?: PredictOptions): Promise<Prediction[]> {
    const prefixes = tasks.map((t) => t.prefix);
    const texts = this.completer.completeFrames
      ? await this.completer.completeFrames(prefixes, options)
      : await sequentially(prefixes, (p) => this.completer.completeFrame(p, options));
    return texts.map((text, i) => readPrediction(prefixes[i], text));
  }
}

async function sequentially<T, R>(items: T[], f: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (const item of items) out.push(await f(item));
  return out;
}

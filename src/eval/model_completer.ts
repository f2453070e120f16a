/**
 * The model side of evaluation: encodes an NDL prefix, keeps its last tokens when it is longer
 * than the model's context (minus room for the answer), decodes with the KV cache until the
 * next frame's <|action_sep|> or an exit, and returns the text. Greedy unless a temperature > 0
 * is given.
 */
import type { LlamaModel } from '../model/model';
import { generate } from '../model/generate';
import { EXIT_KINDS, exitToken, STRUCTURE_TOKENS, DOCUMENT_TOKENS } from '../ndl/tokens';
import type { Tokenizer } from '../tokenizer';
import type { TextCompleter } from './completer';
import type { PredictOptions } from './types';

export interface ModelCompleterOptions {
  /** Longest continuation, in tokens. */
  maxNewTokens: number;
}

export class ModelCompleter implements TextCompleter {
  readonly name = 'model';
  private readonly stops: number[];
  /** Prompts cut on the left because they did not fit the context window. */
  truncatedPrompts = 0;

  constructor(
    private readonly model: LlamaModel,
    private readonly tokenizer: Tokenizer,
    private readonly options: ModelCompleterOptions = { maxNewTokens: 96 },
  ) {
    this.stops = [
      STRUCTURE_TOKENS.actionSep,
      STRUCTURE_TOKENS.traceEnd,
      DOCUMENT_TOKENS.end,
      ...EXIT_KINDS.map(exitToken),
    ].map((t) => tokenizer.idOf(t));
  }

  async completeFrame(prefix: string, options: PredictOptions = {}): Promise<string> {
    let ids = this.tokenizer.encode(prefix);
    const room = this.model.config.max_seq_len - this.options.maxNewTokens;
    if (ids.length > room) {
      // Keep the most recent frames: the next state depends most on them.
      ids = ids.slice(ids.length - room);
      this.truncatedPrompts++;
    }
    const greedy = !(options.temperature && options.temperature > 0);
    const result = generate(this.model, ids, {
      maxNewTokens: this.options.maxNewTokens,
      stopTokens: this.stops,
      greedy,
      temperature: greedy ? undefined : options.temperature,
      topP: greedy ? undefined : options.topP,
      seed: options.seed ?? 0,
    });
    return this.tokenizer.decode(result.ids);
  }
}

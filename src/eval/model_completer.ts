/**
 * The model side of evaluation: encodes an NDL prompt, decodes with the KV cache until the next
 * frame's <|action_sep|> or an exit, and returns the text. Greedy unless a temperature > 0 is
 * given; the answer is one frame the parser reads (frame_grammar.ts) unless constrainFrame is
 * false, and its SRC fields spell lines of the prompt's program unless constrainSrc is false
 * (src_constraint.ts). A prompt is never cut: one that leaves no room for an answer in the
 * model's context is a PromptTooLongError (the task builders check `budget` first and count
 * such tasks as did_not_fit), and the answer may use whatever room the prompt leaves, up to
 * maxNewTokens; an answer that limit cuts is decoded once more with no 4-gram repeated
 * (model/no_repeat.ts). An unsampled answer to a breakpoint is walked by the model's own single
 * steps (jump_walk.ts) unless walkSteps is 0. Many prompts at once may be decoded by worker
 * processes that hold the same model (decode_pool.ts), with the same answers.
 */
import type { LlamaModel } from '../model/model';
import { beamSearch, beamSearchBatch } from '../model/beam';
import { generate } from '../model/generate';
import { generateBatch, type BatchPrompt } from '../model/generate_batch';
import { withoutRepeatedNgrams } from '../model/no_repeat';
import { EXIT_KINDS, exitToken, STRUCTURE_TOKENS, DOCUMENT_TOKENS } from '../ndl/tokens';
import type { Tokenizer } from '../tokenizer';
import { answerRoom, nextFrameRoom, type PromptBudget } from './budget';
import type { DecodePool } from './decode_pool';
import { PromptTooLongError, type TextCompleter } from './completer';
import { FrameGrammar } from './frame_grammar';
import { DEFAULT_WALK_STEPS, walkedAnswers, WALKED_ACTIONS } from './jump_walk';
import { SrcConstraint } from './src_constraint';
import type { PredictOptions } from './types';

export interface ModelCompleterOptions {
  /** Longest continuation, in tokens. */
  maxNewTokens: number;
  /** SRC fields may only spell lines of the prompt's program (src_constraint.ts); default true. */
  constrainSrc?: boolean;
  /** The answer may only be text that parses as one frame of the prompt's document (frame_grammar.ts); default true. */
  constrainFrame?: boolean;
  /** Beam search with this many beams where decoding is not sampled (model/beam.ts); default DEFAULT_BEAMS; 1 is greedy. */
  beams?: number;
  /** The context T the model was trained at (a checkpoint's checkpointSeqLen); default: its max_seq_len. */
  seqLen?: number;
  /** Prompts decoded together by completeFrames (DEFAULT_BATCH_SIZE); 1 decodes one at a time. */
  batchSize?: number;
  /** Most single steps that walk an unsampled answer to a jump (jump_walk.ts); default DEFAULT_WALK_STEPS; 0 answers jumps in one shot. */
  walkSteps?: number;
}

/**
 * Prompts per decoding batch. Measured on 2 CPU cores (docs/eval.md, "Batched decoding"): one
 * prompt's step is bound by per-op latency, so 16 rows decode several times faster per task.
 */
export const DEFAULT_BATCH_SIZE = 16;

/**
 * Beams of an unsampled answer unless told otherwise. Chosen on the validation split (docs/eval.md,
 * "Decoding: beam search"): 4 beams beat greedy decoding over all actions (full frame +0.7 on
 * validation with the event chosen first, +1.2 to +1.5 on the three test seeds' checkpoints), 8
 * found nothing 4 did not, and batched beams take about as long as greedy batches.
 */
export const DEFAULT_BEAMS = 4;

/** The longest frame a model completer writes unless told otherwise, in tokens (eval commands and the quickstart). */
export const DEFAULT_MAX_NEW_TOKENS = 96;

/**
 * An answer the token limit cuts (the model looping on a value) is decoded again with no n-gram
 * of this many tokens written twice (docs/eval.md, "Decoding: answers that run on").
 */
export const NO_REPEAT_NGRAM = 4;

/** The completer's name in result tables: free SRC decoding is told apart from the default. */
export const FREE_SRC_NAME = 'model_free_src';

export class ModelCompleter implements TextCompleter {
  readonly name: string;
  private readonly stops: number[];
  private readonly frameSep: number;
  readonly budget: PromptBudget;
  readonly constrainsSrc: boolean;

  constructor(
    readonly model: LlamaModel,
    readonly tokenizer: Tokenizer,
    private readonly options: ModelCompleterOptions = { maxNewTokens: DEFAULT_MAX_NEW_TOKENS },
    /** Worker processes holding the same model, which decode many prompts side by side (decode_pool.ts). */
    private readonly pool?: DecodePool,
  ) {
    this.stops = [
      STRUCTURE_TOKENS.actionSep,
      STRUCTURE_TOKENS.traceEnd,
      DOCUMENT_TOKENS.end,
      ...EXIT_KINDS.map(exitToken),
    ].map((t) => tokenizer.idOf(t));
    this.frameSep = tokenizer.idOf(STRUCTURE_TOKENS.frameSep);
    this.constrainsSrc = options.constrainSrc ?? true;
    this.name = this.constrainsSrc ? 'model' : FREE_SRC_NAME;
    const seqLen = options.seqLen ?? model.config.max_seq_len;
    if (seqLen > model.config.max_seq_len) throw new Error(`ModelCompleter: context ${seqLen} is longer than the model's max_seq_len ${model.config.max_seq_len}`);
    this.budget = { seqLen, countTokens: (text) => tokenizer.encodeIds(text).length, maxAnswerTokens: options.maxNewTokens };
  }

  /**
   * A beam search picks the answer's event token (or its exit) greedily, by its own probability,
   * and searches only the frame after it: summed log-probabilities favour a one-token exit over
   * any longer frame, and on the validation split joint beams answered "the program finished" for
   * 79% of the breakpoints the run does reach (docs/eval.md, "Decoding: beam search").
   */
  private readonly beforeEvent = (generated: readonly number[]): boolean => generated.every((id) => id === this.frameSep);

  /** Beams of an unsampled answer (1: greedy decoding). */
  get beams(): number {
    return this.options.beams ?? DEFAULT_BEAMS;
  }

  /** How an unsampled answer is decoded, for result titles: `4-beam search` or `greedy`, and whether jumps are walked. */
  get decoding(): string {
    const search = this.beams > 1 ? `${this.beams}-beam search` : 'greedy';
    return this.walksJumps ? `${search}, breakpoints walked` : search;
  }

  private get walkSteps(): number {
    return this.options.walkSteps ?? DEFAULT_WALK_STEPS;
  }

  private get walksJumps(): boolean {
    return this.walkSteps > 0;
  }

  /** The same model and tokenizer with SRC decoding constrained or free. */
  withSrcConstraint(on: boolean): ModelCompleter {
    return new ModelCompleter(this.model, this.tokenizer, { ...this.options, constrainSrc: on }, this.pool);
  }

  /** Stops the decode workers, if any (they also stop when this process exits). */
  close(): void {
    this.pool?.close();
  }

  async completeFrame(prefix: string, options: PredictOptions = {}): Promise<string> {
    const [walked] = await this.walked([prefix], options);
    return walked ?? this.decodeFrame(prefix, options);
  }

  async completeFrames(prefixes: string[], options: PredictOptions = {}): Promise<string[]> {
    if (this.pool?.takes(prefixes.length)) return this.pool.completeFrames(prefixes, options, { ...this.options });
    const answers = await this.walked(prefixes, options);
    // The one-shot answers, of the prompts whose jump was not walked to an answer only.
    const rest = answers.flatMap((answer, i) => (answer === undefined ? [i] : []));
    const oneShot = await this.decodeFrames(rest.map((i) => prefixes[i]), options);
    rest.forEach((i, k) => (answers[i] = oneShot[k]));
    return answers as string[];
  }

  /**
   * The answers of the jumps walked (jump_walk.ts), when unsampled and not turned off; undefined
   * for the rest, which take the one-shot answer. A walked jump's one-shot answer is decoded only
   * where its walk cannot answer: on the validation split, for 46 of 299 breakpoints.
   */
  private async walked(prefixes: string[], options: PredictOptions): Promise<Array<string | undefined>> {
    if (!this.walksJumps || !isGreedy(options)) return prefixes.map(() => undefined);
    const answers = await walkedAnswers(prefixes, (prompts) => this.decodeFrames(prompts, options), this.budget, {
      actions: WALKED_ACTIONS,
      maxSteps: this.walkSteps,
      answerRoom: nextFrameRoom(this.budget),
    });
    // A walk may go on from a shorter document, but a prompt with no room for its answer is still
    // refused, as its one-shot decoding (which checks the rest) would refuse it.
    answers.forEach((answer, i) => {
      if (answer !== undefined) this.room(this.tokenizer.encode(prefixes[i]));
    });
    return answers;
  }

  private async decodeFrame(prefix: string, options: PredictOptions): Promise<string> {
    const ids = this.tokenizer.encode(prefix);
    const limits = this.limits(prefix, ids);
    const beams = this.beams;
    const greedy = isGreedy(options);
    const decode = (allowedTokens: typeof limits.allowedTokens) =>
      greedy && beams > 1
        ? beamSearch(this.model, ids, { ...limits, allowedTokens, stopTokens: this.stops, beams, greedyWhile: this.beforeEvent })
        : generate(this.model, ids, { ...limits, allowedTokens, stopTokens: this.stops, ...sampling(options), seed: options.seed ?? 0 });
    let result = decode(limits.allowedTokens);
    if (result.stop !== 'stop_token') result = decode(this.withoutRepeats(limits.allowedTokens));
    return this.tokenizer.decode(result.ids);
  }

  /** An answer's constraint with no n-gram written twice, for the second decoding of an answer the token limit cut. */
  private withoutRepeats(allowed: BatchPrompt['allowedTokens']): NonNullable<BatchPrompt['allowedTokens']> {
    return withoutRepeatedNgrams(allowed, NO_REPEAT_NGRAM, this.model.config.vocab_size);
  }

  /**
   * The one-shot answer to every prefix, decoded in batches of prompts of similar length (sorted
   * by token count, so little of a batch is padding). A beam search's batch holds batchSize
   * prompts' beams.
   */
  private async decodeFrames(prefixes: string[], options: PredictOptions): Promise<string[]> {
    const batchSize = this.options.batchSize ?? DEFAULT_BATCH_SIZE;
    const beams = this.beams;
    const prompts: BatchPrompt[] = prefixes.map((prefix) => {
      const ids = this.tokenizer.encode(prefix);
      return { ids, ...this.limits(prefix, ids), seed: options.seed ?? 0 };
    });
    const order = prompts.map((_, i) => i).sort((a, b) => prompts[a].ids.length - prompts[b].ids.length || a - b);
    const texts: string[] = new Array(prefixes.length);
    const decode = (rows: BatchPrompt[]) =>
      beams > 1 && isGreedy(options)
        ? beamSearchBatch(this.model, rows, { beams, stopTokens: this.stops, greedyWhile: this.beforeEvent })
        : generateBatch(this.model, rows, { stopTokens: this.stops, ...sampling(options) });
    const cut: number[] = [];
    for (let i = 0; i < order.length; i += batchSize) {
      const batch = order.slice(i, i + batchSize);
      const results = decode(batch.map((j) => prompts[j]));
      batch.forEach((j, k) => {
        texts[j] = this.tokenizer.decode(results[k].ids);
        if (results[k].stop !== 'stop_token') cut.push(j);
      });
    }
    // Answers the token limit cut are decoded again with no n-gram repeated (model/no_repeat.ts).
    for (let i = 0; i < cut.length; i += batchSize) {
      const batch = cut.slice(i, i + batchSize);
      const results = decode(batch.map((j) => ({ ...prompts[j], allowedTokens: this.withoutRepeats(prompts[j].allowedTokens) })));
      batch.forEach((j, k) => (texts[j] = this.tokenizer.decode(results[k].ids)));
    }
    return texts;
  }

  /** The tokens an answer may take after a prompt of `ids`; a prompt with no room is PromptTooLongError. */
  private room(ids: number[]): number {
    const room = answerRoom(this.budget, ids.length);
    if (room < 1) throw new PromptTooLongError(ids.length, this.budget.seqLen);
    return room;
  }

  /** The answer's token limit and SRC constraint for one prompt; a prompt with no room is PromptTooLongError. */
  private limits(prefix: string, ids: number[]): Pick<BatchPrompt, 'maxNewTokens' | 'allowedTokens'> {
    const room = this.room(ids);
    const grammar = (this.options.constrainFrame ?? true) ? FrameGrammar.forPrompt(this.tokenizer, prefix, this.constrainsSrc) : undefined;
    // A prompt the grammar cannot read (no action to answer) still gets its SRC lines.
    const constraint = grammar ?? (this.constrainsSrc ? SrcConstraint.forPrompt(this.tokenizer, prefix) : undefined);
    return {
      maxNewTokens: Math.min(this.options.maxNewTokens, room),
      allowedTokens: constraint && ((generated: readonly number[]) => constraint.allowed(generated)),
    };
  }
}

function isGreedy(options: PredictOptions): boolean {
  return !(options.temperature && options.temperature > 0);
}

/** generate's sampling options for PredictOptions: greedy, or temperature and top-p. */
function sampling(options: PredictOptions): { greedy: boolean; temperature?: number; topP?: number } {
  const greedy = isGreedy(options);
  return { greedy, temperature: greedy ? undefined : options.temperature, topP: greedy ? undefined : options.topP };
}

/**
 * Grammar-constrained decoding of a whole answer frame (spec ndl.md §3): the model may only write
 * what the parser reads as one frame of the prompt's document, so every answer parses.
 *
 *   <|frame_sep|> then an exit token, or an event token and its two fields:
 *     line:   <|arg_sep|> LOCALS <|src_sep|> SRC <|action_sep|>
 *     others: <|src_sep|> SRC <|arg_sep|> LOCALS-or-VALUE <|action_sep|>
 *
 * Events and exits are those of the document's direction; after a breakpoint action only a line
 * event (at the target) or an exit can follow. Where the program's text narrows what can come
 * next to a step (program_flow.ts: the control-flow graph, and whether a line calls), the
 * answer's event is one of those possible and its SRC one of that event's lines: forward from a
 * line, a line event only at a line that can follow, a return or exception only at the line
 * itself, a call only where the line can call; forward from a call, its first statement; forward
 * from a return, what follows the line that called (which frame a stop is in, and which line
 * called, is read from the document: frame_stack.ts); backwards from a line, only a line that can come
 * before it (as `inv_line_call` where it calls) or the function's call from its first statement;
 * backwards from a return, the return's own line; backwards into a line's calls, the return of a
 * function it names; backwards past a callee's call, the calling line or an earlier call's return
 * (past the entry's, the exit); a step_return from a line, the function's return (or an
 * exception) at one of its own lines; an inv_step_call, the function's call.
 *
 * LOCALS and VALUE must stay a prefix of the NDL JSON the parser accepts (json_prefix.ts: an object of distinct string-valued keys, or a string or
 * null) and close only when whole; LOCALS keys stay among the names the program's text allows
 * that frame (local_names.ts: a call frame's parameters, a step's changed variables). SRC is constrained to the program's lines as before
 * (src_constraint.ts), or free text when SRC is decoded freely. What the model chooses (which
 * event, which line, which values) is untouched: on the validation split 4% of its answers,
 * 14–16% of those after breakpoint and inv_step_call, did not parse before (docs/eval.md,
 * "Decoding: the frame grammar").
 */
import { showsValue } from '../debugger';
import { JsonPrefix, type JsonShape, type KeyRule } from '../ndl/json_prefix';
import { parseDocument } from '../ndl/parse';
import type { ParsedFrame } from '../ndl/types';
import { EXIT_KINDS, eventToken, exitToken, FORWARD_EVENTS, INVERSE_EVENTS, STRUCTURE_TOKENS as S, type ExitKind, type NdlEvent } from '../ndl/tokens';
import type { TextTokenizer } from '../tokenizer/types';
import { forwardStop, inverseStop } from './frame_stack';
import { LocalNames } from './local_names';
import type { ProgramCalls } from './program_calls';
import { ProgramFlow, type NextFrame } from './program_flow';
import { ProgramSource } from './session_source';
import { SrcConstraint } from './src_constraint';
import { specialId, tokenBytes, type TokenBytes } from './token_bytes';

const FORWARD_EXITS: readonly ExitKind[] = EXIT_KINDS.filter((k) => k !== 'inv_exit_entry');
const INVERSE_EXITS: readonly ExitKind[] = ['inv_exit_entry'];

/** Sets of ids that LOCALS and VALUE fields allow, kept per distinct set (a few dozen in a run). */
const MAX_CACHED_SETS = 512;

/** What every prompt's grammar shares for one tokenizer. */
interface GrammarVocabulary extends TokenBytes {
  frameSep: number;
  srcSep: number;
  argSep: number;
  actionSep: number;
  eventById: Map<number, NdlEvent>;
  /** Text ids whose bytes hold no quote, backslash or control byte: each only lengthens an open string. */
  stringSafe: number[];
  /** The other text ids, checked one by one inside strings. */
  stringRisky: number[];
  /** Text ids by their first byte. */
  textIdsByFirstByte: Map<number, number[]>;
  /** Field id sets by a key naming them, so that equal sets are built once. */
  sets: Map<string, ReadonlySet<number>>;
}

const vocabularies = new WeakMap<TextTokenizer, GrammarVocabulary>();

function vocabularyOf(tok: TextTokenizer): GrammarVocabulary {
  const cached = vocabularies.get(tok);
  if (cached) return cached;
  const id = (t: string) => specialId(tok, t, 'frame grammar');
  const base = tokenBytes(tok);
  const safe = (b: Buffer) => b.every((x) => x >= 0x20 && x !== 0x22 && x !== 0x5c);
  const v: GrammarVocabulary = {
    ...base,
    frameSep: id(S.frameSep),
    srcSep: id(S.srcSep),
    argSep: id(S.argSep),
    actionSep: id(S.actionSep),
    eventById: new Map([...FORWARD_EVENTS, ...INVERSE_EVENTS].map((e) => [id(eventToken(e)), e])),
    stringSafe: base.textIds.filter((i) => safe(base.bytes[i]!)),
    stringRisky: base.textIds.filter((i) => !safe(base.bytes[i]!)),
    textIdsByFirstByte: byFirstByte(base),
    sets: new Map(),
  };
  vocabularies.set(tok, v);
  return v;
}

function byFirstByte(base: TokenBytes): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const id of base.textIds) {
    const first = base.bytes[id]![0];
    if (first === undefined) continue;
    const ids = out.get(first);
    if (ids) ids.push(id);
    else out.set(first, [id]);
  }
  return out;
}

/** The set named `key`, built by `make` the first time. */
function cachedSet(v: GrammarVocabulary, key: string, make: () => Iterable<number>): ReadonlySet<number> {
  let set = v.sets.get(key);
  if (!set) {
    if (v.sets.size >= MAX_CACHED_SETS) v.sets.clear();
    set = new Set(make());
    v.sets.set(key, set);
  }
  return set;
}

/**
 * The keys a LOCALS field may hold, for a frame with `event` whose SRC is `src` (undefined for a
 * line event, whose LOCALS come before its SRC); undefined: any.
 */
type KeysOf = (event: NdlEvent, src: string | undefined) => KeyRule | undefined;

/** One field of the frame: what opens it, what closes it, and how its text is checked. */
interface Field {
  kind: 'src' | JsonShape;
  opener: number;
  closer: number;
}

export class FrameGrammar {
  private readonly vocab: GrammarVocabulary;
  private readonly firstTokens: ReadonlySet<number>;

  /**
   * `frames`: each event the answer may open with, and the constraint on its SRC (undefined:
   * free text); `exits`: the exits it may be instead; `keysOf`: the names its LOCALS may hold.
   */
  constructor(
    tok: TextTokenizer,
    private readonly frames: ReadonlyMap<NdlEvent, SrcConstraint | undefined>,
    exits: readonly ExitKind[],
    private readonly keysOf: KeysOf = () => undefined,
  ) {
    this.vocab = vocabularyOf(tok);
    const id = (token: string) => specialId(tok, token, 'frame grammar');
    this.firstTokens = new Set([...[...frames.keys()].map((e) => id(eventToken(e))), ...exits.map((k) => id(exitToken(k)))]);
  }

  /**
   * The grammar for a prompt (a document cut after an action); undefined when the prompt does
   * not parse that far, so that there is no document to continue.
   */
  static forPrompt(tok: TextTokenizer, prefix: string, constrainSrc: boolean): FrameGrammar | undefined {
    const doc = parseDocument(prefix);
    const last = doc.frames[doc.frames.length - 1];
    if (doc.error || !doc.direction || !last?.action) return undefined;
    const program = constrainSrc ? SrcConstraint.forDocument(tok, doc) : undefined;
    const forward = doc.direction === 'forward';
    const source = new ProgramSource(doc.context);
    const names = new LocalNames(source);
    const srcOf = (srcs: readonly string[] | undefined) => (constrainSrc && srcs ? new SrcConstraint(tok, srcs) : program);
    const flow = new ProgramFlow(source);
    const step = stepDelta(names, flow.calls, last);
    // A line event's LOCALS come before its SRC: its keys are those of every line it may stop at.
    const keysOf = (lineSrcs: readonly string[] | undefined): KeysOf => {
      const lineKeys = lineSrcs && names.forFrame('line', lineSrcs);
      return (event, src) => step?.(event, src) ?? (src !== undefined ? names.forFrame(event, [src]) : lineKeys);
    };
    // Where the program's text narrows what comes next, the answer stays inside it (program_flow.ts).
    const back = forward ? undefined : inverseStop(doc.frames);
    if (back?.caller === null && (last.action.kind === 'inv_step_into' || last.action.kind === 'inv_step_over')) {
      // Stepping back past the entry's own call leaves the function (spec ndl.md §4).
      return new FrameGrammar(tok, new Map(), INVERSE_EXITS);
    }
    const stop: Stop = forward ? (forwardStop(doc.frames) ?? {}) : { ownFrame: back?.ownFrame, caller: back?.caller ?? undefined };
    const next = flowAfter(flow, last.action.kind, last.event, last.src, stop);
    if (next) {
      const frames = new Map(next.map((f) => [f.event, srcOf(f.srcs)]));
      return new FrameGrammar(tok, frames, forward ? FORWARD_EXITS : [], keysOf(next.find((f) => f.event === 'line')?.srcs));
    }
    const target = last.action.kind === 'breakpoint' ? last.action.target : undefined;
    if (target !== undefined) return new FrameGrammar(tok, new Map([['line', srcOf([target])]]), FORWARD_EXITS, keysOf([target]));
    const events: readonly NdlEvent[] = forward ? FORWARD_EVENTS : INVERSE_EVENTS;
    return new FrameGrammar(tok, new Map(events.map((e) => [e, program])), forward ? FORWARD_EXITS : INVERSE_EXITS, keysOf(undefined));
  }

  /**
   * The ids the next token may be after `generated` (the answer so far). Undefined only where
   * `generated` already broke the grammar (a search that did not apply it) or a field has no
   * valid continuation left: then decoding is free rather than forced.
   */
  allowed(generated: readonly number[]): ReadonlySet<number> | undefined {
    const v = this.vocab;
    if (generated.length === 0) return cachedSet(v, `only ${v.frameSep}`, () => [v.frameSep]);
    if (generated[0] !== v.frameSep) return undefined;
    if (generated.length === 1) return this.firstTokens;
    const event = v.eventById.get(generated[1]);
    if (event === undefined || !this.firstTokens.has(generated[1])) return undefined;
    const value: JsonShape = showsValue(event) ? 'value' : 'locals';
    const fields: Field[] =
      event === 'line'
        ? [
            { kind: value, opener: v.argSep, closer: v.srcSep },
            { kind: 'src', opener: v.srcSep, closer: v.actionSep },
          ]
        : [
            { kind: 'src', opener: v.srcSep, closer: v.argSep },
            { kind: value, opener: v.argSep, closer: v.actionSep },
          ];
    let at = 2;
    let src: string | undefined;
    for (const field of fields) {
      if (at === generated.length) return cachedSet(v, `only ${field.opener}`, () => [field.opener]);
      if (generated[at] !== field.opener) return undefined;
      let end = at + 1;
      while (end < generated.length && v.bytes[generated[end]]) end++;
      if (end === generated.length) {
        const keys = field.kind === 'locals' ? this.keysOf(event, src) : undefined;
        return this.inField(field, generated, at + 1, this.frames.get(event), keys);
      }
      if (generated[end] !== field.closer) return undefined;
      if (field.kind === 'src') src = Buffer.concat(generated.slice(at + 1, end).map((i) => v.bytes[i]!)).toString('utf8');
      at = end;
    }
    // The frame is closed by <|action_sep|>, a stop token: nothing follows it.
    return undefined;
  }

  /** Inside an open field whose text is generated[start..]. */
  private inField(field: Field, generated: readonly number[], start: number, src: SrcConstraint | undefined, keys: KeyRule | undefined): ReadonlySet<number> | undefined {
    const v = this.vocab;
    if (field.kind === 'src') {
      const constrained = src?.allowed(generated, field.closer);
      return constrained ?? cachedSet(v, `text+${field.closer}`, () => [...v.textIds, field.closer]);
    }
    const json = new JsonPrefix(field.kind, keys);
    for (let i = start; i < generated.length; i++) json.push(v.bytes[generated[i]]!);
    if (json.invalid) return undefined;
    if (json.complete) return cachedSet(v, `only ${field.closer}`, () => [field.closer]);
    const fits = (ids: number[]) => ids.filter((id) => json.clone().push(v.bytes[id]!));
    const keyBytes = json.nextKeyBytes;
    if (keyBytes) {
      // Inside a limited key only tokens that open with a byte some name allows next can fit.
      const ids = fits([...keyBytes].flatMap((b) => v.textIdsByFirstByte.get(b) ?? []));
      return ids.length ? new Set(ids) : undefined;
    }
    if (!json.inPlainString) {
      const ids = fits(v.textIds);
      return ids.length ? new Set(ids) : undefined;
    }
    const risky = fits(v.stringRisky);
    return cachedSet(v, `string+${risky.join(',')}`, () => [...v.stringSafe, ...risky]);
  }
}

/**
 * Where the answer's LOCALS is a delta against the stop's own locals (spec §3) over one line that
 * made no traced call, the rule for its keys (LocalNames.forStep): forward, a line event after a
 * step_into from a line (the line ran alone) or after a step_over from a line that calls nothing;
 * backwards, an `inv_line` after an inverse step from a line (an `inv_line` made no call: the line
 * it names is the one that ran). Undefined where the stop's locals are not known exactly.
 */
function stepDelta(names: LocalNames, calls: ProgramCalls, last: ParsedFrame): KeysOf | undefined {
  const { action, locals } = last;
  if (!action || !locals || !last.exact) return undefined;
  if (last.event === 'line' && (action.kind === 'step_into' || (action.kind === 'step_over' && calls.callsOn(last.src) === 'none'))) {
    const rule = names.forStep(last.src, locals);
    return (event) => (event === 'line' ? rule : undefined);
  }
  if ((last.event === 'inv_line' || last.event === 'inv_line_call') && (action.kind === 'inv_step_into' || action.kind === 'inv_step_over')) {
    const bySrc = new Map<string, KeyRule>();
    return (event, src) => {
      if (event !== 'inv_line' || src === undefined) return undefined;
      if (!bySrc.has(src)) bySrc.set(src, names.forStep(src, locals));
      return bySrc.get(src);
    };
  }
  return undefined;
}

/** What the document says of its last stop (frame_stack.ts). */
interface Stop {
  /** The stop is in its function's own frame, not a comprehension's or lambda's on the same line. */
  ownFrame?: boolean;
  /** Forward, at a return: the line that called the function; backwards, at a callee's inv_call: the line whose calls it belongs to. */
  caller?: string;
}

/** What the program's text says can follow `action` from a stop with `event` at `src`. */
function flowAfter(flow: ProgramFlow, action: string, event: NdlEvent | undefined, src: string, stop: Stop): NextFrame[] | undefined {
  if (action === 'step_into' || action === 'step_over') {
    if (event === 'line') return flow.afterLine(src, action === 'step_into', stop.ownFrame);
    if (event === 'call') return flow.afterCall(src);
    return event === 'return' && stop.caller !== undefined ? flow.afterReturn(stop.caller) : undefined;
  }
  if (action === 'step_return' && event === 'line') return flow.returnFrom(src);
  if (action === 'inv_step_call' && event !== 'inv_call' && event !== 'inv_exception') return flow.callOf(src);
  if (action !== 'inv_step_into' && action !== 'inv_step_over') return undefined;
  if (event === 'inv_line') return flow.beforeLine(src, stop.ownFrame);
  if (event === 'inv_return') return flow.beforeReturn(src, stop.ownFrame);
  if (event === 'inv_call') return stop.caller !== undefined ? flow.beforeCall(stop.caller) : undefined;
  if (event !== 'inv_line_call') return undefined;
  // Stepping back over a line's calls lands on the line itself, into them on the last call's return (spec ndl.md §4).
  return action === 'inv_step_over' ? [{ event: 'inv_line', srcs: [src] }] : flow.intoCalls(src);
}

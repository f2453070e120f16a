/**
 * The NDL parser: document text (or a prefix plus a model's continuation) → frames with the
 * delta-encoded LOCALS resolved against the history. It never throws on bad text: problems
 * come back as `error` strings, with everything read before them kept.
 */
import { showsValue, type Action } from '../debugger';
import { readNdlJson } from './pyjson';
import {
  DOCUMENT_TOKENS as D,
  EXIT_KINDS,
  ExitKind,
  FORWARD_ACTIONS,
  FORWARD_EVENTS,
  INVERSE_ACTIONS,
  INVERSE_EVENTS,
  NdlEvent,
  SPECIAL_TOKENS,
  STRUCTURE_TOKENS as S,
  ActionKind,
  actionToken,
  eventToken,
  exitToken,
} from './tokens';
import type { ParsedDocument, ParsedExit, ParsedFrame } from './types';

/** A piece of NDL text: a special token or the plain text between two of them. */
interface Piece {
  tok?: string;
  text?: string;
  offset: number;
}

const TOKEN_RE = new RegExp(SPECIAL_TOKENS.map((t) => t.replace(/[|]/g, '\\|')).join('|'), 'g');
const EVENT_BY_TOKEN = new Map<string, NdlEvent>([...FORWARD_EVENTS, ...INVERSE_EVENTS].map((e) => [eventToken(e), e]));
const ACTION_BY_TOKEN = new Map<string, ActionKind>([...FORWARD_ACTIONS, ...INVERSE_ACTIONS].map((a) => [actionToken(a), a]));
const EXIT_BY_TOKEN = new Map<string, ExitKind>(EXIT_KINDS.map((k) => [exitToken(k), k]));

function split(text: string): Piece[] {
  const pieces: Piece[] = [];
  let last = 0;
  TOKEN_RE.lastIndex = 0;
  for (let m = TOKEN_RE.exec(text); m !== null; m = TOKEN_RE.exec(text)) {
    if (m.index > last) pieces.push({ text: text.slice(last, m.index), offset: last });
    pieces.push({ tok: m[0], offset: m.index });
    last = m.index + m[0].length;
  }
  if (last < text.length) pieces.push({ text: text.slice(last), offset: last });
  return pieces;
}

class ParseError extends Error {}

/** Cursor over the pieces; `text()` reads an optional plain-text piece (empty when absent). */
class Cursor {
  i = 0;
  constructor(readonly pieces: Piece[]) {}
  atEnd(): boolean {
    return this.i >= this.pieces.length;
  }
  peekTok(): string | undefined {
    return this.pieces[this.i]?.tok;
  }
  where(): string {
    const p = this.pieces[this.i];
    return p ? `offset ${p.offset}` : 'end of text';
  }
  fail(msg: string): never {
    throw new ParseError(`${msg} at ${this.where()}`);
  }
  tok(expected: string): void {
    const p = this.pieces[this.i];
    if (!p) this.fail(`text ends before ${expected}`);
    if (p.tok !== expected) this.fail(`expected ${expected}, found ${describe(p)}`);
    this.i++;
  }
  text(): string {
    const p = this.pieces[this.i];
    if (p && p.text !== undefined) {
      this.i++;
      return p.text;
    }
    return '';
  }
}

function describe(p: Piece): string {
  if (p.tok) return p.tok;
  const t = p.text ?? '';
  return JSON.stringify(t.length > 30 ? t.slice(0, 30) + '…' : t);
}

/** Resolution state carried from frame to frame (the previous frame's full locals, if shown). */
interface History {
  locals: Record<string, string> | undefined;
  exact: boolean;
}

/**
 * Reads one frame's event part starting at an event token, up to and including
 * `<|action_sep|>` (optional at the very end of the text), then its action if present.
 */
function readFrame(c: Cursor, hist: History): ParsedFrame {
  const p = c.pieces[c.i];
  const event = p?.tok ? EVENT_BY_TOKEN.get(p.tok) : undefined;
  if (!event) c.fail(`expected an event token or an exit, found ${p ? describe(p) : 'nothing'}`);
  c.i++;
  let src: string;
  let argText: string;
  if (event === 'line') {
    c.tok(S.argSep);
    argText = c.text();
    c.tok(S.srcSep);
    src = c.text();
  } else {
    c.tok(S.srcSep);
    src = c.text();
    c.tok(S.argSep);
    argText = c.text();
  }
  const arg = readNdlJson(argText);
  if (!arg.ok) c.fail(`bad ${showsValue(event) ? 'VALUE' : 'LOCALS'} JSON (${arg.error})`);
  const frame: ParsedFrame = { event, src, elided: false, exact: true };
  if (showsValue(event)) {
    if (arg.value !== null && typeof arg.value !== 'string') c.fail('VALUE must be a JSON string or null');
    frame.value = arg.value;
    // The locals at a return/exception are not written: a later delta against them has an unknown base.
    hist.locals = undefined;
    hist.exact = false;
  } else {
    if (!Array.isArray(arg.value)) c.fail('LOCALS must be a JSON object');
    let entries = arg.value;
    if (entries.length > 0 && entries[0][0] === '..' && entries[0][1] === '..') {
      frame.elided = true;
      entries = entries.slice(1);
    }
    if (entries.some(([k]) => k === '..')) c.fail('the ".." marker must come first');
    frame.shown = entries;
    const resolved: Record<string, string> = {};
    if (frame.elided) {
      Object.assign(resolved, hist.locals ?? {});
      frame.exact = hist.locals !== undefined && hist.exact;
    }
    for (const [k, v] of entries) resolved[k] = v;
    frame.locals = resolved;
    hist.locals = resolved;
    hist.exact = frame.exact;
  }
  if (c.atEnd()) return frame; // a continuation may stop before <|action_sep|>
  c.tok(S.actionSep);
  const a = c.peekTok();
  const kind = a ? ACTION_BY_TOKEN.get(a) : undefined;
  if (kind) {
    c.i++;
    const action: Action = { kind };
    if (kind === 'breakpoint') action.target = c.text();
    frame.action = action;
  }
  return frame;
}

/** Parses a whole document, or as much of one as the text holds. Never throws. */
export function parseDocument(text: string): ParsedDocument {
  return parseWithHistory(text).doc;
}

function parseWithHistory(text: string): { doc: ParsedDocument; hist: History } {
  const doc: ParsedDocument = { direction: undefined, context: '', frames: [], complete: false };
  const c = new Cursor(split(text));
  const hist: History = { locals: undefined, exact: false };
  try {
    c.tok(D.begin);
    c.tok(S.traceContextStart);
    doc.context = c.text();
    while (!c.atEnd()) {
      const t = c.peekTok();
      if (t === S.traceEnd) break;
      if (doc.frames.length > 0 && doc.frames[doc.frames.length - 1].action === undefined) {
        c.fail('a frame without an action can only be followed by <|trace_end|>');
      }
      c.tok(S.frameSep);
      const exitTok = c.peekTok();
      const exit = exitTok ? EXIT_BY_TOKEN.get(exitTok) : undefined;
      if (exit) {
        c.i++;
        doc.exit = exit;
        break;
      }
      const frame = readFrame(c, hist);
      const dir = frame.event.startsWith('inv_') ? 'inverse' : 'forward';
      if (doc.direction === undefined) doc.direction = dir;
      else if (doc.direction !== dir) c.fail(`${dir} event ${eventToken(frame.event)} in a ${doc.direction} document`);
      doc.frames.push(frame);
    }
    if (c.atEnd()) return { doc, hist };
    c.tok(S.traceEnd);
    doc.complete = true;
    c.tok(D.end);
    if (!c.atEnd()) c.fail('text after <|end_of_text|>');
  } catch (e) {
    doc.error = e instanceof ParseError ? e.message : `internal parser error: ${(e as Error).message}`;
  }
  return { doc, hist };
}

export type NextFrameResult =
  | { ok: true; frame: ParsedFrame; exit?: undefined }
  | { ok: true; exit: ExitKind; frame?: undefined }
  | { ok: false; error: string };

/**
 * Reads `prefix` once (a document cut right after an action, e.g. `...<|action_sep|><|step_over|>`
 * or after a breakpoint's target text) and returns a function giving the frame that a
 * continuation adds, with its LOCALS resolved against the prefix's frames. The continuation
 * must start with `<|frame_sep|>`; text after the new frame's `<|action_sep|>` is ignored, and
 * it may stop before it. Use this to score several continuations of one prefix. Never throws.
 */
export function preparePrefix(prefix: string): (continuation: string) => NextFrameResult {
  const { doc, hist } = parseWithHistory(prefix);
  let problem: string | undefined;
  if (doc.error) problem = `prefix: ${doc.error}`;
  else if (doc.complete || doc.exit) problem = 'prefix: the document is already finished';
  else if (!doc.frames[doc.frames.length - 1]?.action) problem = 'prefix: must end with an action';
  return (continuation: string): NextFrameResult => {
    if (problem) return { ok: false, error: problem };
    const c = new Cursor(split(continuation));
    try {
      if (c.atEnd()) return { ok: false, error: 'continuation is empty' };
      if (c.peekTok() === undefined) {
        c.fail('continuation must start with <|frame_sep|> (plain text would run on from the prefix)');
      }
      c.tok(S.frameSep);
      const exitTok = c.peekTok();
      const exit = exitTok ? EXIT_BY_TOKEN.get(exitTok) : undefined;
      if (exit) return { ok: true, exit };
      const frame = readFrame(c, { ...hist });
      const dir = frame.event.startsWith('inv_') ? 'inverse' : 'forward';
      if (doc.direction !== dir) c.fail(`${dir} event in a ${doc.direction} document`);
      return { ok: true, frame };
    } catch (e) {
      return { ok: false, error: e instanceof ParseError ? `continuation: ${e.message}` : `internal parser error: ${(e as Error).message}` };
    }
  };
}

/** The frame a continuation adds after `prefix` (see preparePrefix). Never throws. */
export function parseNextFrame(prefix: string, continuation: string): NextFrameResult {
  return preparePrefix(prefix)(continuation);
}

export type { ParsedExit };

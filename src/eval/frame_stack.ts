/**
 * Which frame a document's last stop sits in, read from the document's own frames: the program's
 * text cannot tell a comprehension's line events from its line's, or which line called the
 * function a stop returns from, but the document that led to the stop can. Used by the frame
 * grammar's flow rules (program_flow.ts); nothing here reads the real run.
 */
import type { ParsedFrame } from '../ndl/types';

/** Whether a line names a frame of its own whose line events read it (a comprehension, generator expression, lambda) or yields; a `for` statement's own keyword does not count. */
export function namesOwnFrames(src: string): boolean {
  return /\b(for|lambda|yield)\b/.test(src.trim().replace(/^for\b/, ''));
}

/**
 * Whether the frames whose events read `src` may be a comprehension's, generator expression's or
 * lambda's rather than a function's own: the line names one, or it does not finish its
 * statement (an open bracket, a trailing backslash), so a later line of the statement may.
 */
function mayHoldFrames(src: string): boolean {
  if (namesOwnFrames(src)) return true;
  const code = src.replace(/'(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"/g, '""').replace(/#.*$/, '');
  const depth = [...code].reduce((d, ch) => d + ('([{'.includes(ch) ? 1 : ')]}'.includes(ch) ? -1 : 0), 0);
  return depth > 0 || /\\\s*$/.test(code);
}

/** Whether a call event with this SRC opens a function's own frame: it reads a `def` line (a comprehension's or lambda's reads its line, a decorated function's the decorator). */
export function opensOwnFrame(callSrc: string): boolean {
  return /^\s*(async\s+)?def\s/.test(callSrc);
}

/** Where a forward document's last stop is. */
export interface ForwardStop {
  /** The stop's frame is a function's own: its call event read a `def` line. */
  ownFrame: boolean;
  /** For a return: the line that made the call, where the caller's frame is a function's own. */
  caller?: string;
}

interface OpenFrame {
  /** Whether it is a function's own frame; undefined: not known. */
  own?: boolean;
  /** The SRC of its latest event. */
  at?: string;
}

/** The frames below a breakpoint's stop: the jump does not show how deep it went. */
const UNKNOWN: OpenFrame = {};

/**
 * The frames open at a forward document's last stop, from `main`'s call on. A call pushes a frame
 * and a return pops one. A breakpoint lands on a line at a depth the document does not show: the
 * frames below it become unknown, and the one it lands in is a function's own unless its line
 * could be a comprehension's or lambda's (their line events read the line that holds them).
 */
export function forwardStop(frames: readonly ParsedFrame[]): ForwardStop | undefined {
  if (frames[0]?.event !== 'call') return undefined;
  let open: OpenFrame[] = [{ own: opensOwnFrame(frames[0].src) }];
  for (let i = 1; i < frames.length; i++) {
    const [before, frame] = [frames[i - 1], frames[i]];
    if (!before.action) return undefined;
    if (before.action.kind === 'breakpoint') {
      open = [UNKNOWN, { own: mayHoldFrames(frame.src) ? undefined : true, at: frame.src }];
      continue;
    }
    // A frame's return is its last event: whatever comes next is in its caller.
    if (before.event === 'return' && open[open.length - 1] !== UNKNOWN) open.pop();
    const top = open[open.length - 1];
    if (!top) return undefined;
    if (frame.event === 'call') open.push({ own: opensOwnFrame(frame.src) });
    else if (top !== UNKNOWN) top.at = frame.src;
  }
  const [stop, caller] = [open[open.length - 1], open[open.length - 2]];
  const last = frames[frames.length - 1];
  return { ownFrame: stop.own === true, caller: last.event === 'return' && caller?.own === true ? caller.at : undefined };
}

/** Where an inverse document's last stop is. */
export interface InverseStop {
  /** The stop's frame is a function's own, not a comprehension's or lambda's on the same line. */
  ownFrame: boolean;
  /** At a callee's inv_call: the line whose calls it belongs to; null at the entry's own call. */
  caller?: string | null;
}

interface InverseFrame {
  own?: boolean;
  /** The line whose calls opened it (undefined for the entry's frame). */
  caller?: string;
}

/** A callee's frame, opened by stepping back onto its return at `src`: a function's own unless a comprehension, generator expression or lambda could return there. */
const calleeFrame = (src: string, caller: string): InverseFrame => ({ own: mayHoldFrames(src) ? undefined : true, caller });

/**
 * The frames open at an inverse document's last stop. The document opens at the entry function's
 * return, in its own frame. Stepping into a line's calls goes from its inv_line_call copy to the
 * last call's inv_return (a frame opens); from a callee's inv_call the document goes on to an
 * earlier call's inv_return (a sibling frame of the same line) or back to the caller's frame.
 * Undefined where the frames do not follow that shape (a truncated run's tree).
 */
export function inverseStop(frames: readonly ParsedFrame[]): InverseStop | undefined {
  if (frames[0]?.event !== 'inv_return') return undefined;
  const open: InverseFrame[] = [{ own: true }];
  for (let i = 1; i < frames.length; i++) {
    const [before, frame] = [frames[i - 1], frames[i]];
    if (frame.event === 'inv_return') {
      if (before.event === 'inv_line_call') open.push(calleeFrame(frame.src, before.src));
      else if (before.event === 'inv_call' && open.length > 1) open.push(calleeFrame(frame.src, open.pop()!.caller!));
      else return undefined;
    } else if (before.event === 'inv_call') {
      if (frame.event === 'inv_call' || open.length < 2) return undefined;
      open.pop();
    }
  }
  const top = open[open.length - 1];
  const last = frames[frames.length - 1];
  return { ownFrame: top.own === true, caller: last.event === 'inv_call' ? (top.caller ?? null) : undefined };
}

/**
 * Which frame a document's last stop sits in, read from the document's own frames: the program's
 * text cannot tell a comprehension's line events from its line's, or which line called the
 * function a stop returns from, but the document that led to the stop can. Used by the frame
 * grammar's flow rules (program_flow.ts); nothing here reads the real run.
 */
import type { ParsedFrame } from '../ndl/types';

/** A line that may hold a frame of its own whose line events read it (a comprehension, generator expression, lambda) or yields. */
const OWN_FRAMES = /\b(for|lambda|yield)\b/;

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
      open = [UNKNOWN, { own: OWN_FRAMES.test(frame.src.trim().replace(/^for\b/, '')) ? undefined : true, at: frame.src }];
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

/**
 * The line whose calls an inverse document's last frame, an inv_call, belongs to: null for the
 * entry function's own call, undefined where the frames do not say. Stepping into a line's calls
 * backwards goes from its inv_line_call copy to the last call's inv_return; from a callee's
 * inv_call the document goes on to an earlier call's inv_return (the same line) or back to the
 * caller's frame.
 */
export function inverseCaller(frames: readonly ParsedFrame[]): string | null | undefined {
  if (frames[0]?.event !== 'inv_return') return undefined;
  const callers: string[] = [];
  for (let i = 1; i < frames.length; i++) {
    const [before, frame] = [frames[i - 1], frames[i]];
    if (frame.event === 'inv_return') {
      if (before.event === 'inv_line_call') callers.push(before.src);
      else if (before.event !== 'inv_call') return undefined;
    } else if (before.event === 'inv_call' && frame.event !== 'inv_call') {
      if (callers.pop() === undefined) return undefined;
    }
  }
  return callers.length > 0 ? callers[callers.length - 1] : null;
}

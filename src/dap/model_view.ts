/**
 * The model's side of a stop: NDL frames show one function's SRC and locals, never the call
 * stack, so the adapter keeps the predicted stack itself from the events it has seen (a call
 * pushes, the step after a return pops). Only a breakpoint jump skips events it cannot see; then
 * the stack is a guess: back to the innermost frame of the landing function, or that function
 * called from the current top (documented in docs/dap.md).
 */
import type { ParsedFrame } from '../ndl/types';
import type { Direction } from '../debugger';
import type { ProgramSource } from '../eval/session_source';
import type { FrameView, StopView } from './view';

export type ActionWord = 's' | 'n' | 'r' | 'c' | 'b' | 'rs' | 'rn' | 'rc';

export class ModelStack {
  /** Innermost last. */
  private frames: FrameView[];
  private last: ParsedFrame | undefined;
  private pendingPop = false;

  constructor(private readonly source: ProgramSource, private readonly direction: Direction, first: ParsedFrame, firstLine: number | undefined) {
    const loc = source.locate(first.src, first.event === 'call' || first.event === 'inv_call', undefined, direction === 'inverse', firstLine);
    this.frames = [{ func: loc.func, line: loc.line, entry: direction === 'forward', locals: first.locals ?? {}, exact: first.locals !== undefined }];
    this.last = first;
  }

  /** Takes in the frame the model wrote after `action` (undefined: it wrote an exit). */
  advance(action: ActionWord, frame: ParsedFrame): void {
    const prev = this.last;
    this.last = frame;
    const isCall = frame.event === 'call' || frame.event === 'inv_call';
    if (this.direction === 'forward') {
      if (this.pendingPop && this.frames.length > 1) this.frames.pop();
      this.pendingPop = false;
      if (frame.event === 'call') {
        const loc = this.source.locate(frame.src, true, undefined, false);
        this.frames.push({ func: loc.func, line: loc.line, entry: false, locals: frame.locals ?? {}, exact: true });
        return;
      }
      const loc = this.source.locate(frame.src, false, this.locationOfTop(), false);
      if (action === 'b') this.restack(loc.func);
      this.updateTop(frame, loc.line, loc.func);
      if (frame.event === 'return') this.pendingPop = true;
      return;
    }
    // Inverse: back past a call into the caller; back into a callee from the line that called it.
    if (prev?.event === 'inv_call' && this.frames.length > 1) this.frames.pop();
    else if (prev?.event === 'inv_line_call' && action === 'rs') this.frames.push({ func: '?', entry: false, locals: {}, exact: false });
    const loc = this.source.locate(frame.src, isCall, this.locationOfTop(), true);
    this.updateTop(frame, loc.line, loc.func);
  }

  view(): StopView {
    const f = this.last as ParsedFrame;
    const frames = [...this.frames].reverse();
    if (this.direction === 'forward') {
      if (f.event === 'line') return { kind: 'line', event: 'line', frames };
      if (f.event === 'return' && frames.length > 1) return { kind: 'return', event: 'return', frames: frames.slice(1), value: f.value ?? null, returned: frames[0].func };
    }
    return { kind: 'event', event: f.event, frames, ...(f.value !== undefined ? { value: f.value } : {}) };
  }

  private locationOfTop() {
    const top = this.frames[this.frames.length - 1];
    return { line: top.line, func: top.func };
  }

  private restack(func: string): void {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      if (this.frames[i].func === func) {
        this.frames = this.frames.slice(0, i + 1);
        return;
      }
    }
    this.frames.push({ func, entry: false, locals: {}, exact: false });
  }

  private updateTop(frame: ParsedFrame, line: number | undefined, func: string): void {
    const top = this.frames[this.frames.length - 1];
    // A return or exception frame shows a VALUE, not locals: the frame keeps what it had.
    const locals = frame.locals ?? top.locals;
    this.frames[this.frames.length - 1] = { ...top, func, line, locals, exact: frame.locals !== undefined ? frame.exact : top.exact };
  }
}

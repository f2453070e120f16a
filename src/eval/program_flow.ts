/**
 * What a program's text settles about the frame next to a step: which events can come next and at
 * which lines. Forward from a line event: a line event only at a line that can follow in the
 * control-flow graph, a return or exception only at the line itself, a call only if the line can
 * call (and nothing but a call or an exception if it always calls). Forward from a call: the
 * function's first statement; from a return: what follows the line that called it. Backwards from
 * a line event: only a line that can come before it (as `inv_line_call` where that line calls,
 * `inv_line` where it may not), or the function's call from its first statement. Backwards from a
 * return: the return's own line. Backwards into a line's calls: a return at a line of a function
 * it names (or its own comprehension's); backwards past a callee's call: that, or the calling line
 * itself. A step_return from a line: the function's return (or an exception) at one of its own
 * lines. An inv_step_call: the function's call. The frame grammar keeps the model's answer inside
 * these; the model still chooses among them and writes every value.
 *
 * A SRC text that several statements share gets the union of their answers. No answer where the
 * stop's line opens frames whose line events read the same (a comprehension, a lambda) unless the
 * document says which frame the stop is in (frame_stack.ts), or where its function has no graph
 * (control_flow.ts).
 */
import type { NdlEvent } from '../ndl/tokens';
import { functionFlow, RETURNS, type FunctionFlow } from './control_flow';
import { namesOwnFrames } from './frame_stack';
import { ProgramCalls } from './program_calls';
import type { ProgramSource } from './session_source';

/** An event the answer may open with, and the SRC texts it may carry (undefined: any line). */
export interface NextFrame {
  event: NdlEvent;
  srcs?: readonly string[];
}


type Answer = (line: number, flow: FunctionFlow) => NextFrame[] | undefined;

export class ProgramFlow {
  /** Whether each line calls (program_calls.ts), read once per program. */
  readonly calls: ProgramCalls;
  private readonly flows = new Map<number, FunctionFlow | undefined>();

  constructor(private readonly source: ProgramSource) {
    this.calls = new ProgramCalls(source.context);
  }

  /**
   * The frames a step_into or step_over from a line event at `src` can land on. `ownFrame`: the
   * stop is known to be in its function's own frame, not in a comprehension or lambda on the same
   * line (the document says so, frame_stack.ts), so such a line gets an answer too.
   */
  afterLine(src: string, into: boolean, ownFrame = false): NextFrame[] | undefined {
    return this.union(src, (line, flow) => {
      const calls = this.calls.callsOn(src);
      const next = [...flow.successors.get(line)!];
      const goesOn = !into || calls !== 'always';
      const frames: NextFrame[] = [{ event: 'exception', srcs: [src] }];
      if (goesOn && next.some((n) => n !== RETURNS)) frames.push({ event: 'line', srcs: this.texts(next.filter((n) => n !== RETURNS)) });
      if (goesOn && next.includes(RETURNS)) frames.push({ event: 'return', srcs: [src] });
      if (into && calls !== 'none') frames.push({ event: 'call' });
      return frames;
    }, ownFrame);
  }

  /**
   * The frames an inv_step_into or inv_step_over from an inv_line at `src` can land on. `ownFrame`:
   * the stop is known to be in its function's own frame (frame_stack.ts), so a line with a
   * comprehension or lambda gets an answer too.
   */
  beforeLine(src: string, ownFrame = false): NextFrame[] | undefined {
    return this.union(src, (line, flow) => {
      if (/^\s*except\b/.test(src)) return undefined; // reached from an exception, not a line
      const before = [...flow.successors].filter(([, next]) => next.has(line)).map(([p]) => p);
      const frames: NextFrame[] = [];
      const calls = before.map((p) => ({ p, calls: this.calls.callsOn(this.source.lines[p - 1]) }));
      const mayNotCall = this.texts(calls.filter((c) => c.calls !== 'always').map((c) => c.p));
      const mayCall = this.texts(calls.filter((c) => c.calls !== 'none').map((c) => c.p));
      if (mayNotCall.length > 0) frames.push({ event: 'inv_line', srcs: mayNotCall });
      if (mayCall.length > 0) frames.push({ event: 'inv_line_call', srcs: mayCall });
      if (line === flow.entry) frames.push({ event: 'inv_call', srcs: [this.source.lines[flow.def - 1]] });
      return frames.length > 0 ? frames : undefined;
    }, ownFrame);
  }

  /**
   * The frames a step_into or step_over from a function's return can land on, where `caller` is
   * the line that called it in a function's own frame: what comes after that line (a line that
   * can follow it, its frame's return there), another call the line makes, or an exception there.
   */
  afterReturn(caller: string): NextFrame[] | undefined {
    // The line goes on as a step over it would (its call is done), and may call again.
    const after = this.afterLine(caller, false, true);
    return after && [...after, { event: 'call' }];
  }

  /** The frame a step from a function's call event (SRC its `def` line) lands on: its first statement's line. */
  afterCall(def: string): NextFrame[] | undefined {
    const at = this.source.lines.flatMap((text, i) => (text === def ? [i + 1] : []));
    const entries = new Set<string>();
    for (const line of at) {
      const flow = this.flowAt(line + 1);
      if (!flow || flow.def !== line) return undefined;
      entries.add(this.source.lines[flow.entry - 1]);
    }
    return entries.size > 0 ? [{ event: 'line', srcs: [...entries] }] : undefined;
  }

  /**
   * The frames an inverse step from an inv_return at `src` can land on: that line's own event.
   * `ownFrame`: the return is known to be a function's, not that of a comprehension or lambda on
   * the same line (an inverse document opens at its entry function's return, frame_stack.ts), so
   * such a line gets an answer too.
   */
  beforeReturn(src: string, ownFrame = false): NextFrame[] | undefined {
    return this.union(src, (line, flow) => {
      if (!flow.successors.get(line)!.has(RETURNS)) return undefined;
      const calls = this.calls.callsOn(src);
      const frames: NextFrame[] = [];
      if (calls !== 'always') frames.push({ event: 'inv_line', srcs: [src] });
      if (calls !== 'none') frames.push({ event: 'inv_line_call', srcs: [src] });
      return frames;
    }, ownFrame);
  }

  /**
   * The frames an inv_step_into from an inv_line_call at `src` can land on: the return of the
   * line's last call, at a line of a function the line names or at the line itself for its own
   * comprehension or lambda (spec ndl.md §4: the callees' reversed nodes follow the copy). A frame
   * left by an exception returns from the line it left at, so any line of the callee counts.
   */
  intoCalls(src: string): NextFrame[] | undefined {
    if (!this.source.statements.some((s) => s.src === src)) return undefined;
    const lines = this.calls.calleeLines(src);
    return lines && lines.length > 0 ? [{ event: 'inv_return', srcs: lines }] : undefined;
  }

  /**
   * The frames an inverse step from a callee's inv_call can land on, where `caller` is the line
   * whose calls it belongs to: the return of an earlier call the line made, or the line's own
   * `inv_line` once its first call is passed (spec ndl.md §4).
   */
  beforeCall(caller: string): NextFrame[] {
    const lines = this.calls.calleeLines(caller);
    return [
      { event: 'inv_line', srcs: [caller] },
      { event: 'inv_return', srcs: lines && lines.length > 0 ? lines : undefined },
    ];
  }

  /**
   * The frames a step_return from a line event at `src` can land on: its function's return or an
   * exception leaving it, at one of its lines (an exception that leaves the frame returns from
   * the line it left at, so any line, not only a `return`).
   */
  returnFrom(src: string): NextFrame[] | undefined {
    return this.union(src, (_line, flow) => {
      const lines = this.texts([...flow.successors.keys()]);
      return [
        { event: 'return', srcs: lines },
        { event: 'exception', srcs: lines },
      ];
    });
  }

  /** The frame an inv_step_call from an inverse stop at `src` lands on: its function's call. */
  callOf(src: string): NextFrame[] | undefined {
    return this.union(src, (_line, flow) => [{ event: 'inv_call', srcs: [this.source.lines[flow.def - 1]] }]);
  }

  /**
   * The `def` line whose call comes just before a stop at `src`, where that is the only way in:
   * the first statement of a function body that no loop comes back to.
   */
  callBefore(src: string): string | undefined {
    const frames = this.beforeLine(src);
    return frames?.length === 1 && frames[0].event === 'inv_call' ? frames[0].srcs![0] : undefined;
  }

  /** Each statement reading `src` answers; undefined if any cannot (or its line opens frames of its own, unless `ownFrame`). */
  private union(src: string, answer: Answer, ownFrame = false): NextFrame[] | undefined {
    if (!ownFrame && namesOwnFrames(src)) return undefined;
    const at = this.source.statements.filter((s) => s.src === src);
    if (at.length === 0) return undefined;
    const merged = new Map<NdlEvent, Set<string> | undefined>();
    for (const { line } of at) {
      const flow = this.flowAt(line);
      const frames = flow?.successors.has(line) ? answer(line, flow) : undefined;
      if (!frames) return undefined;
      for (const f of frames) {
        const seen = merged.get(f.event);
        if (merged.has(f.event) && seen === undefined) continue;
        merged.set(f.event, f.srcs === undefined ? undefined : new Set([...(seen ?? []), ...f.srcs]));
      }
    }
    return [...merged].map(([event, srcs]) => ({ event, srcs: srcs && [...srcs] }));
  }

  private flowAt(line: number): FunctionFlow | undefined {
    const fn = this.source.functionAt(line);
    if (!fn || fn.def >= line) return undefined;
    if (!this.flows.has(fn.def)) {
      // A decorated function's call event reads the decorator line.
      const decorated = /^\s*@/.test(this.source.lines[fn.def - 2] ?? '');
      this.flows.set(fn.def, decorated ? undefined : functionFlow(this.source, fn.def, fn.end));
    }
    return this.flows.get(fn.def);
  }

  private texts(lines: number[]): string[] {
    return [...new Set(lines.map((n) => this.source.lines[n - 1]))];
  }
}

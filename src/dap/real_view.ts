/**
 * The real run's state at a node of the oracle's tree, as a DAP stop: the whole call stack,
 * which NDL frames do not carry, rebuilt from the trace's events (each caller at the line it
 * is running, with the locals of its last event).
 */
import { showsValue } from '../debugger';
import { EXIT, type StateTree } from '../debugger/types';
import type { TraceEvent, TraceRecord } from '../trace/types';
import type { FrameView, StopView } from './view';

interface LiveFrame {
  func: string;
  line: number;
  locals: Record<string, string>;
  entry: boolean;
}

export class RealStacks {
  /** For each trace event, the stack right after it, bottom (main) first. */
  private readonly stacks: LiveFrame[][];

  constructor(private readonly trace: TraceRecord, private readonly tree: StateTree) {
    this.stacks = stackSnapshots(trace.events);
  }

  /** The stop at `node` (EXIT: the program exited). Inverse views leave out main: inverse documents have none. */
  view(node: number): StopView {
    if (node === EXIT) return { kind: 'exit', exit: this.tree.exitKind };
    const n = this.tree.nodes[node];
    const stack = this.stacks[n.traceIndex] ?? [];
    const frames: FrameView[] = stack.map((f) => ({ func: f.func, line: f.line, entry: f.entry, locals: f.locals, exact: true })).reverse();
    if (frames.length === 0) throw new Error(`RealStacks: no frame at trace event ${n.traceIndex}`);
    frames[0] = { ...frames[0], line: n.line, locals: n.locals };
    const event = this.trace.events[n.traceIndex];
    if (this.tree.direction === 'inverse') {
      const shown = frames.filter((f) => !f.entry);
      return { kind: 'event', event: n.event, frames: shown, ...(showsValue(n.event) ? { value: n.value } : {}) };
    }
    if (n.event === 'line') return { kind: 'line', event: 'line', frames };
    if (n.event === 'return' && frames.length > 1) return { kind: 'return', event: 'return', frames: frames.slice(1), value: n.value, returned: event.func };
    return { kind: 'event', event: n.event, frames, ...(showsValue(n.event) ? { value: n.value } : {}) };
  }
}

function stackSnapshots(events: TraceEvent[]): LiveFrame[][] {
  const out: LiveFrame[][] = [];
  let stack: LiveFrame[] = [];
  for (const e of events) {
    const frame: LiveFrame = { func: e.func, line: e.line, locals: e.locals, entry: e.depth === 0 };
    // The trace's depth is authoritative (a generator resumed shows as a call at its depth).
    stack = stack.slice(0, e.event === 'call' ? e.depth : e.depth + 1);
    if (e.event === 'call' || stack.length === e.depth) stack.push(frame);
    else stack[e.depth] = frame;
    out.push(stack);
    if (e.event === 'return') stack = stack.slice(0, e.depth);
  }
  return out;
}

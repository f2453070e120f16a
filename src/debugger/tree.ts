/**
 * The forward and inverse state trees (spec ndl.md §4) built from one trace record.
 *
 * Invariant used throughout: in a trace, one invocation's events from its `call` to its
 * `return` are contiguous except for deeper events (its callees): a frame runs synchronously,
 * and a generator's every resumption is a new invocation. A truncated run (status `never`)
 * leaves the invocations still on the stack without a return event.
 */
import type { InverseEvent } from './vocabulary';
import type { TraceEvent, TraceRecord } from '../trace/types';
import { statementLines, traceContext } from './source';
import type { StateNode, StateTree } from './types';

function nodeOf(e: TraceEvent, index: number, traceIndex: number): StateNode {
  const node: StateNode = {
    index,
    event: e.event,
    depth: e.depth,
    invocation: e.invocation,
    line: e.line,
    src: e.src,
    locals: e.locals,
    value: e.value,
    traceIndex,
  };
  if (e.file !== undefined) node.file = e.file;
  return node;
}

/** The breakpoint targets a user could type: a repository-level trace lists its own. */
function targetsOf(trace: TraceRecord, context: string): StateTree['statementLines'] {
  return trace.scope?.statement_lines ?? statementLines(context);
}

/** Every recorded event, `main`'s included, in execution order; EXIT is the run's status. */
export function buildForwardTree(trace: TraceRecord): StateTree {
  const context = traceContext(trace, 'forward');
  return {
    direction: 'forward',
    nodes: trace.events.map((e, i) => nodeOf(e, i, i)),
    exitKind: trace.status,
    context,
    statementLines: targetsOf(trace, context),
  };
}

const INVERSE_OF: Record<TraceEvent['event'], InverseEvent> = {
  call: 'inv_call',
  line: 'inv_line',
  return: 'inv_return',
  exception: 'inv_exception',
};

/**
 * The entry function's invocation (the first one at depth 1: `f`, not `main`) walked backwards.
 * A line that made traced calls gets one copy of itself as `inv_line_call`, followed by the
 * reversed nodes of all of its callees (recursively, one level deeper, as recorded), the latest
 * call first: the callees are the copy's children, so `inv_step_over` from it skips them all and
 * lands on the line's own `inv_line` (spec ndl.md §4).
 *
 * Runs that did not finish: an uncaught exception still gives the entry a return event (value
 * null), so its tree starts at that `inv_return`. A truncated run (`never`) has no return: the
 * tree starts at the last recorded node of the entry's invocation — when the cut came inside a
 * callee, that is the inv_line_call copy of the line still running, followed by the callee's
 * recorded nodes backwards (without an inv_return). If the entry was never called (e.g. main
 * failed evaluating the arguments), the tree has no nodes.
 */
export function buildInverseTree(trace: TraceRecord): StateTree {
  const events = trace.events;
  const context = traceContext(trace, 'inverse');
  const tree: StateTree = {
    direction: 'inverse',
    nodes: [],
    exitKind: 'inv_exit_entry',
    context,
    statementLines: targetsOf(trace, context),
  };
  const entryStart = events.findIndex((e) => e.event === 'call' && e.depth === 1);
  if (entryStart < 0) return tree;

  // The line that made each traced call: invocation id -> trace index of the line event.
  const callerLine = new Map<number, number>();
  events.forEach((e, i) => {
    if (e.event === 'line' && e.calls) for (const c of e.calls) callerLine.set(c, i);
  });

  /** Forward-order list of (trace index, event) for invocation starting at `start`, callees expanded. */
  const expand = (start: number, out: Array<{ traceIndex: number; event: StateNode['event'] }>): number => {
    const { invocation, depth } = events[start];
    // The line whose callees were just expanded: its one copy follows the last of them (in
    // forward order), so reversed it comes first, before the latest call's nodes.
    let pendingCopy: number | undefined;
    const flushCopy = () => {
      if (pendingCopy !== undefined) out.push({ traceIndex: pendingCopy, event: 'inv_line_call' });
      pendingCopy = undefined;
    };
    let i = start;
    for (; i < events.length; i++) {
      const e = events[i];
      if (e.depth < depth || (e.depth === depth && e.invocation !== invocation)) break;
      if (e.depth === depth) {
        flushCopy();
        out.push({ traceIndex: i, event: INVERSE_OF[e.event] });
        if (e.event === 'return') return i + 1;
        continue;
      }
      // A callee's call event (depth + 1): its whole block; the calling line's copy comes after
      // the line's last callee.
      if (e.depth === depth + 1 && e.event === 'call') {
        const line = callerLine.get(e.invocation);
        if (line !== pendingCopy) flushCopy();
        i = expand(i, out) - 1;
        pendingCopy = line;
      }
    }
    flushCopy();
    return i;
  };

  const forward: Array<{ traceIndex: number; event: StateNode['event'] }> = [];
  expand(entryStart, forward);
  forward.reverse();
  tree.nodes = forward.map((f, index) => {
    const node = nodeOf(events[f.traceIndex], index, f.traceIndex);
    node.event = f.event;
    return node;
  });
  return tree;
}

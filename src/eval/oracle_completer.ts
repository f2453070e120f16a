/**
 * A TextCompleter that knows the real run: it replays the prefix's actions through the oracle
 * and writes the true next frame exactly as the formatter would. It is the "perfect model" used
 * to validate every evaluation harness end to end (it must score 100%), and the source of the
 * real state beside the model's in `ndbg debug --verify`.
 */
import { nextNode } from '../debugger';
import { EXIT, StateTree } from '../debugger/types';
import { treeFor } from '../ndl/generate';
import { buildContext, formatDocument } from '../ndl/format';
import { parseDocument } from '../ndl/parse';
import type { TrajectoryStep } from '../ndl/types';
import type { TraceRecord } from '../trace/types';
import type { TextCompleter } from './completer';
import { nextFrameText } from './tasks';

export interface ReplayResult {
  tree: StateTree;
  steps: TrajectoryStep[];
  /** The node the last action leads to, or EXIT. */
  next: number;
}

/** Walks the prefix's actions from the tree's first node; undefined when the prefix is not a valid walk. */
export function replayPrefix(trace: TraceRecord, prefix: string): ReplayResult | undefined {
  const doc = parseDocument(prefix);
  if (doc.error || !doc.direction || doc.frames.length === 0) return undefined;
  const tree = treeFor(trace, doc.direction);
  if (!tree) return undefined;
  const steps: TrajectoryStep[] = [];
  let node = 0;
  for (const frame of doc.frames) {
    if (!frame.action) return undefined;
    steps.push({ node, action: frame.action });
    node = nextNode(tree, node, frame.action);
    if (node === EXIT) break;
  }
  return steps.length === doc.frames.length ? { tree, steps, next: node } : undefined;
}

/** The true continuation of a prefix that ends with an action. */
export function trueContinuation(trace: TraceRecord, prefix: string): string | undefined {
  const r = replayPrefix(trace, prefix);
  if (!r) return undefined;
  const all = r.next === EXIT ? r.steps : [...r.steps, { node: r.next }];
  const text = formatDocument(trace, r.tree, { direction: r.tree.direction, steps: all, end: r.next === EXIT ? 'exit' : 'budget' });
  // The formatter reproduces the prefix byte for byte, so the continuation starts at its end.
  if (!text.startsWith(prefix)) return undefined;
  return nextFrameText(text.slice(prefix.length));
}

export class OracleCompleter implements TextCompleter {
  readonly name = 'oracle';
  /**
   * CONTEXT text (forward and inverse) → trace, so each prefix finds its run in one lookup. An
   * inverse CONTEXT holds only the code: for several runs of one program the first is used.
   */
  private readonly byContext = new Map<string, TraceRecord>();
  constructor(private readonly traces: Map<string, TraceRecord> | TraceRecord) {
    if (traces instanceof Map) {
      for (const t of traces.values()) {
        for (const direction of ['forward', 'inverse'] as const) {
          const context = buildContext(t, direction);
          if (!this.byContext.has(context)) this.byContext.set(context, t);
        }
      }
    }
  }
  private traceFor(prefix: string): TraceRecord | undefined {
    if (!(this.traces instanceof Map)) return this.traces;
    return this.byContext.get(parseDocument(prefix).context);
  }
  async completeFrame(prefix: string): Promise<string> {
    const trace = this.traceFor(prefix);
    return (trace && trueContinuation(trace, prefix)) ?? '';
  }
}

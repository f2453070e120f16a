/**
 * The naive baseline that every accuracy table shows beside the model: "the next source line
 * runs and nothing changes". Forward: a line event at the next statement line below the
 * current one (the first body line after a `def`), locals unchanged. Inverse: an inv_line event
 * at the statement line above (the same line after an inv_return), locals unchanged. It needs no
 * model, so a model's number means something only where it beats this one.
 */
import type { StateNode, StateTree } from '../debugger/types';
import type { ParsedFrame } from '../ndl/types';
import type { FramePredictor, NextStateTask, Prediction } from './types';

function statementLines(tree: StateTree): Array<{ line: number; src: string }> {
  return [...(tree.statementLines ?? [])].sort((a, b) => a.line - b.line);
}

function unchanged(node: StateNode, event: ParsedFrame['event'], src: string): ParsedFrame {
  const empty = Object.keys(node.locals).length === 0;
  return { event, src, shown: [], elided: !empty, locals: { ...node.locals }, exact: true };
}

export function baselineFrame(tree: StateTree, nodeIndex: number): ParsedFrame {
  const node = tree.nodes[nodeIndex];
  const lines = statementLines(tree);
  if (tree.direction === 'forward') {
    const below = lines.find((l) => l.line > node.line);
    return unchanged(node, 'line', below?.src ?? node.src);
  }
  if (node.event === 'inv_return' || node.event === 'inv_exception') return unchanged(node, 'inv_line', node.src);
  const above = [...lines].reverse().find((l) => l.line < node.line);
  return unchanged(node, 'inv_line', above?.src ?? node.src);
}

export class NaiveBaseline implements FramePredictor {
  readonly name = 'baseline';
  async predict(task: NextStateTask): Promise<Prediction> {
    return { frame: baselineFrame(task.tree, task.node) };
  }
}

/** Predicts the truth itself: the scoring harness must give it 100% everywhere. */
export class OraclePredictor implements FramePredictor {
  readonly name = 'oracle';
  async predict(task: NextStateTask): Promise<Prediction> {
    return task.truth;
  }
}

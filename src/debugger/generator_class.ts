/**
 * The documented `generator` class of the pdb differential check (docs/debugger.md,
 * "Documented disagreements"). A disagreement is in it when generator frames explain it
 * exactly, in one of these ways; anything else is `other`.
 *
 * 1. bdb's generator rules decided pdb's stop (the harness's `gen_rule` "stopframe" or
 *    "send_end", pdb_harness.py `_generator_rule`). The oracle keeps the state tree's
 *    definition there (every resumption is an invocation that ends at its yield): following bdb
 *    would need to know which invocations are resumptions of the same generator frame, which
 *    the trace does not record (two generators of one function interleave, e.g. under zip).
 * 2. Generator closes that pdb never sees: pdb keeps the frame and locals of its last stop
 *    (`curframe_locals`, `returnframe`), so a generator that the program drops while pdb holds
 *    them is closed later, inside pdb's trace function, where no events happen — the close's
 *    events (a resumption that starts with GeneratorExit raised at the yield) are in the trace
 *    but never happen under pdb. In the class when pdb's stop is exactly the oracle's answer on
 *    the tree without the close blocks after the starting node (trace indices shifted down by
 *    the events left out, as counting mode counts only events that happened).
 * 3. The other way round: pdb stops inside a generator's close (`gen_rule` "close") where the
 *    oracle's node is not in a close — the tracer reads every frame's f_locals at every event,
 *    which keeps a dropped generator alive until the frame's next event and then closes it
 *    inside the tracer's trace function, so the trace lacks a close that pdb (which reads
 *    f_locals only at stops) sees. Counting mode reads f_locals like the tracer and does not
 *    see this.
 *
 * Which closes happen where depends on which references the tracer and pdb hold, so the oracle
 * cannot follow pdb in 2 and 3.
 */
import { nextNode } from './actions';
import type { PdbExit, PdbStop } from './pdb';
import { EXIT, type Action, type StateTree } from './types';

export type StopMatcher = (tree: StateTree, j: number, stop: PdbStop | PdbExit | undefined) => boolean;

/** The first own event of a close: GeneratorExit raised at the yield (close() or collection). */
const GENERATOR_EXIT = /^GeneratorExit\(/;

/**
 * The generator-close blocks after node `from`, as [start, end) node ranges: a call node whose
 * invocation's next node is a GeneratorExit exception, through that invocation's return (and
 * whatever it called in between, e.g. from a `finally`).
 */
export function generatorCloseBlocks(tree: StateTree, from: number): Array<[number, number]> {
  const nodes = tree.nodes;
  const blocks: Array<[number, number]> = [];
  for (let c = from + 1; c + 1 < nodes.length; c++) {
    const call = nodes[c];
    const first = nodes[c + 1];
    if (call.event !== 'call' || first.event !== 'exception' || first.invocation !== call.invocation) continue;
    if (!GENERATOR_EXIT.test(first.value ?? '')) continue;
    let end = c + 1;
    while (end < nodes.length && (nodes[end].depth > call.depth || nodes[end].invocation === call.invocation)) {
      end++;
      const last = nodes[end - 1];
      if (last.event === 'return' && last.invocation === call.invocation) break;
    }
    blocks.push([c, end]);
    c = end - 1;
  }
  return blocks;
}

/** The tree without the given node ranges; `index` maps a kept node's old index to its new one. */
function withoutBlocks(tree: StateTree, blocks: Array<[number, number]>): { view: StateTree; index: (i: number) => number } {
  const newIndex = new Int32Array(tree.nodes.length).fill(EXIT);
  const nodes: StateTree['nodes'] = [];
  let removed = 0;
  let b = 0;
  tree.nodes.forEach((n, i) => {
    while (b < blocks.length && i >= blocks[b][1]) b++;
    if (b < blocks.length && i >= blocks[b][0]) {
      removed++;
      return;
    }
    newIndex[i] = nodes.length;
    nodes.push({ ...n, index: nodes.length, traceIndex: n.traceIndex - removed });
  });
  return { view: { ...tree, nodes }, index: (i) => (i === EXIT ? EXIT : newIndex[i]) };
}

/**
 * Whether a disagreement — pdb's `stop` after `action` from node `i`, where the oracle's node
 * did not match — is in the generator class (the module comment gives the three ways).
 */
export function isGeneratorDisagreement(tree: StateTree, i: number, action: Action, stop: PdbStop | PdbExit | undefined, matches: StopMatcher): boolean {
  if (stop === undefined) return false;
  if (stop.gen_rule === 'stopframe' || stop.gen_rule === 'send_end') return true;
  const blocks = generatorCloseBlocks(tree, i);
  if (stop.gen_rule === 'close') {
    const j = nextNode(tree, i, action);
    return !blocks.some(([start, end]) => j >= start && j < end);
  }
  if (blocks.length === 0) return false;
  const { view, index } = withoutBlocks(tree, blocks);
  return matches(view, nextNode(view, index(i), action), stop);
}

/**
 * The oracle: where each debugger action leads from a node of a state tree (spec ndl.md §4),
 * which actions exist there, and which breakpoint targets a user could name. The forward
 * actions are what pdb does (checked by the differential harness, see pdb.ts); the inverse
 * ones are defined on the inverse tree only.
 */
import { upperBound } from '../util/search';
import { FORWARD_ACTIONS, INVERSE_ACTIONS, type ActionKind } from './vocabulary';
import { Action, EXIT, StateTree } from './types';

/** Lookups derived once per tree (trees are immutable once built). */
interface TreeIndex {
  /** First j > i with depth(j) <= depth(i), or EXIT. */
  nextNotDeeper: Int32Array;
  /** First j > i with depth(j) < depth(i), or EXIT. */
  nextShallower: Int32Array;
  /** Forward: invocation -> its return node. Inverse: invocation -> its inv_call node. */
  boundary: Map<number, number>;
  /** SRC text -> increasing indices of the line nodes with that text. */
  linesBySrc: Map<string, number[]>;
  /** Index of the last line node, or -1. */
  lastLine: number;
}

const indexes = new WeakMap<StateTree, TreeIndex>();

function indexOf(tree: StateTree): TreeIndex {
  let ix = indexes.get(tree);
  if (ix) return ix;
  const nodes = tree.nodes;
  const n = nodes.length;
  const nextNotDeeper = new Int32Array(n).fill(EXIT);
  const nextShallower = new Int32Array(n).fill(EXIT);
  // Monotonic stacks from the right: the nearest later node at a depth <= / < this one's.
  const notDeeper: number[] = [];
  const shallower: number[] = [];
  for (let i = n - 1; i >= 0; i--) {
    const d = nodes[i].depth;
    while (notDeeper.length > 0 && nodes[notDeeper[notDeeper.length - 1]].depth > d) notDeeper.pop();
    if (notDeeper.length > 0) nextNotDeeper[i] = notDeeper[notDeeper.length - 1];
    notDeeper.push(i);
    while (shallower.length > 0 && nodes[shallower[shallower.length - 1]].depth >= d) shallower.pop();
    if (shallower.length > 0) nextShallower[i] = shallower[shallower.length - 1];
    shallower.push(i);
  }
  const boundary = new Map<number, number>();
  const boundaryEvent = tree.direction === 'forward' ? 'return' : 'inv_call';
  const linesBySrc = new Map<string, number[]>();
  let lastLine = -1;
  for (const node of nodes) {
    if (node.event === boundaryEvent) boundary.set(node.invocation, node.index);
    if (node.event === 'line') {
      const list = linesBySrc.get(node.src);
      if (list) list.push(node.index);
      else linesBySrc.set(node.src, [node.index]);
      lastLine = node.index;
    }
  }
  ix = { nextNotDeeper, nextShallower, boundary, linesBySrc, lastLine };
  indexes.set(tree, ix);
  return ix;
}

function checkNode(tree: StateTree, i: number): void {
  if (!Number.isInteger(i) || i < 0 || i >= tree.nodes.length) {
    throw new RangeError(`node ${i} is not in the ${tree.direction} tree (${tree.nodes.length} nodes)`);
  }
}

/** First element of a sorted list greater than i, or EXIT. */
function firstAfter(sorted: number[] | undefined, i: number): number {
  if (!sorted) return EXIT;
  const at = upperBound(sorted, i);
  return at < sorted.length ? sorted[at] : EXIT;
}

/**
 * The node reached from node `i` by `action`, or EXIT (-1) when the action leaves the tree
 * (past the last node, `continue`, a breakpoint that is never hit, past the entry's call).
 * From EXIT every action stays at EXIT. Throws on a node outside the tree, an action of the
 * other direction, or a breakpoint without target.
 */
export function nextNode(tree: StateTree, i: number, action: Action): number {
  if (i === EXIT) return EXIT;
  checkNode(tree, i);
  const nodes = tree.nodes;
  const ix = indexOf(tree);
  const node = nodes[i];
  const after = (j: number) => (j < nodes.length ? j : EXIT);
  if (tree.direction === 'forward') {
    switch (action.kind) {
      case 'step_into':
        return after(i + 1);
      case 'step_over':
        return ix.nextNotDeeper[i];
      case 'step_return':
        // At a return, pdb's `return` stops at the caller's next event; elsewhere at this
        // invocation's return (EXIT when the run was cut off before it).
        if (node.event === 'return') return ix.nextShallower[i];
        return ix.boundary.get(node.invocation) ?? EXIT;
      case 'breakpoint':
        if (action.target === undefined) throw new Error('nextNode: a breakpoint action needs a target');
        return firstAfter(ix.linesBySrc.get(action.target), i);
      case 'continue':
        return EXIT;
      default:
        throw new Error(`nextNode: ${action.kind} is not a forward action`);
    }
  }
  switch (action.kind) {
    case 'inv_step_into':
      return after(i + 1);
    case 'inv_step_over':
      return ix.nextNotDeeper[i];
    case 'inv_step_call':
      // At an inv_call we are already at the arguments: go on to the caller's node (the line
      // that made the call), the way pdb's `return` at a return goes on to the caller; from
      // the entry's inv_call that is inv_exit_entry.
      if (node.event === 'inv_call') return ix.nextShallower[i];
      return ix.boundary.get(node.invocation) ?? EXIT;
    default:
      throw new Error(`nextNode: ${action.kind} is not an inverse action`);
  }
}

/**
 * Every action defined at node `i`: all forward (or inverse) actions, except `breakpoint` when
 * there is no target at all. None at EXIT.
 */
export function availableActions(tree: StateTree, i: number): ActionKind[] {
  if (i === EXIT) return [];
  checkNode(tree, i);
  if (tree.direction === 'inverse') return [...INVERSE_ACTIONS];
  const hasTarget = indexOf(tree).lastLine > i || unreachedLines(tree, i, new Set()).length > 0;
  return FORWARD_ACTIONS.filter((a) => a !== 'breakpoint' || hasTarget);
}

/**
 * Breakpoint targets from node `i` of a forward tree, as SRC texts: `reached` are the texts of
 * the later line nodes (distinct, in order of first occurrence after i), `unreached` are the
 * statement lines of the program's functions whose text no later line node has (distinct, in
 * line order) — a breakpoint on those leads to EXIT. Inverse trees have no breakpoints.
 */
export function breakpointTargets(tree: StateTree, i: number): { reached: string[]; unreached: string[] } {
  if (tree.direction === 'inverse' || i === EXIT) return { reached: [], unreached: [] };
  checkNode(tree, i);
  const seen = new Set<string>();
  const reached: string[] = [];
  for (let j = i + 1; j < tree.nodes.length; j++) {
    const node = tree.nodes[j];
    if (node.event === 'line' && !seen.has(node.src)) {
      seen.add(node.src);
      reached.push(node.src);
    }
  }
  return { reached, unreached: unreachedLines(tree, i, seen) };
}

function unreachedLines(tree: StateTree, i: number, reachedTexts: Set<string>): string[] {
  const ix = indexOf(tree);
  const out: string[] = [];
  const seen = new Set<string>();
  for (const { src } of tree.statementLines ?? []) {
    if (seen.has(src) || reachedTexts.has(src)) continue;
    seen.add(src);
    if (firstAfter(ix.linesBySrc.get(src), i) === EXIT) out.push(src);
  }
  return out;
}

/**
 * The line number pdb's `tbreak` gets for a breakpoint on `target` from node `i`: the line of
 * the first later line node with that text, else the first statement line with that text, else
 * the first CONTEXT line with that text; undefined when the text is not a line of the CONTEXT.
 */
export function breakpointLine(tree: StateTree, i: number, target: string): number | undefined {
  return breakpointLocation(tree, i, target)?.line;
}

/**
 * breakpointLine with the file the line is in, for repository-level trees (their lines are
 * file lines; there the CONTEXT fallback does not apply, its line numbers are no file's).
 */
export function breakpointLocation(tree: StateTree, i: number, target: string): { line: number; file?: string } | undefined {
  const j = nextNode(tree, i, { kind: 'breakpoint', target });
  if (j !== EXIT) return { line: tree.nodes[j].line, file: tree.nodes[j].file };
  const statement = (tree.statementLines ?? []).find((s) => s.src === target);
  if (statement) return { line: statement.line, file: statement.file };
  if (tree.nodes.some((n) => n.file !== undefined)) return undefined;
  const k = (tree.context ?? '').split('\n').indexOf(target);
  return k >= 0 ? { line: k + 1 } : undefined;
}

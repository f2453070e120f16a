/**
 * Checks one formatted document against the tree it came from: the trajectory follows the
 * oracle (`nextNode`), and parsing the text gives back every state and action. Used by the
 * tests and by `ndbg ndl check` (the CruxEval-wide round trip).
 */
import { nextNode } from '../debugger';
import { EXIT, StateTree } from '../debugger/types';
import { parseDocument } from './parse';
import type { Trajectory } from './types';

export interface VerifyStats {
  documents: number;
  frames: number;
  /** Frames showing LOCALS. */
  localsFrames: number;
  /** LOCALS frames whose resolved locals equal the true locals as a dict (order aside). */
  resolvedEqual: number;
  /** LOCALS frames the parser marked exact (delta base shown in the document). */
  exactFrames: number;
  /** Exact frames whose resolved dict still holds a variable the program had deleted (spec §3: not marked). */
  exactWithDeleted: number;
}

export function emptyStats(): VerifyStats {
  return { documents: 0, frames: 0, localsFrames: 0, resolvedEqual: 0, exactFrames: 0, exactWithDeleted: 0 };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Problems found (empty when the document is right). What "gives back every state" means
 * given the spec's delta encoding: event, SRC, VALUE and action exactly; every variable the
 * LOCALS show has its true value; a full dict (no `".."`) equals the true locals in order; a
 * resolved dict never contradicts the truth (a variable both have has the same value), holds
 * every true variable when the parser says `exact`, and has extra variables only after a
 * delta (deleted variables are not marked).
 */
export function verifyDocument(tree: StateTree, trajectory: Trajectory, text: string, stats?: VerifyStats): string[] {
  const problems: string[] = [];
  const steps = trajectory.steps;
  // 1. The trajectory follows the oracle.
  if (steps.length === 0) return ['empty trajectory'];
  if (steps[0].node !== 0) problems.push(`starts at node ${steps[0].node}, not 0`);
  for (let k = 0; k + 1 < steps.length; k++) {
    const a = steps[k].action;
    if (!a) {
      problems.push(`frame ${k} has no action but is not last`);
      continue;
    }
    const j = nextNode(tree, steps[k].node, a);
    if (j !== steps[k + 1].node) problems.push(`frame ${k}: ${a.kind} from node ${steps[k].node} leads to ${j}, trajectory has ${steps[k + 1].node}`);
  }
  const last = steps[steps.length - 1];
  if (trajectory.end === 'exit') {
    if (!last.action || nextNode(tree, last.node, last.action) !== EXIT) problems.push('ends with exit but the last action does not lead to EXIT');
  } else if (last.action) problems.push('a budget-cut trajectory must end with a frame without action');

  // 2. The parser gives it all back.
  const doc = parseDocument(text);
  if (doc.error) problems.push(`parse error: ${doc.error}`);
  if (!doc.complete) problems.push('parsed document is not complete');
  if (doc.frames.length !== steps.length) problems.push(`parsed ${doc.frames.length} frames, wrote ${steps.length}`);
  const wantExit = trajectory.end === 'exit' ? tree.exitKind : undefined;
  if (doc.exit !== wantExit) problems.push(`exit ${doc.exit} != ${wantExit}`);
  if (stats) stats.documents++;
  const n = Math.min(doc.frames.length, steps.length);
  for (let k = 0; k < n; k++) {
    const f = doc.frames[k];
    const node = tree.nodes[steps[k].node];
    const where = `frame ${k} (node ${node.index})`;
    if (stats) stats.frames++;
    if (f.event !== node.event) problems.push(`${where}: event ${f.event} != ${node.event}`);
    if (f.src !== node.src) problems.push(`${where}: src ${JSON.stringify(f.src)} != ${JSON.stringify(node.src)}`);
    if (!same(f.action, steps[k].action)) problems.push(`${where}: action ${JSON.stringify(f.action)} != ${JSON.stringify(steps[k].action)}`);
    if (f.shown === undefined) {
      if (f.value !== node.value) problems.push(`${where}: value ${f.value} != ${node.value}`);
      continue;
    }
    const truth = node.locals;
    for (const [key, v] of f.shown) if (truth[key] !== v) problems.push(`${where}: shows ${key}=${v}, truth ${truth[key]}`);
    if (!f.elided && !same(f.shown, Object.entries(truth))) problems.push(`${where}: full dict differs from the true locals`);
    const resolved = f.locals ?? {};
    for (const [key, v] of Object.entries(resolved)) {
      if (key in truth && truth[key] !== v) problems.push(`${where}: resolved ${key}=${v}, truth ${truth[key]}`);
      if (!(key in truth) && !f.elided) problems.push(`${where}: resolved has ${key} without a delta`);
    }
    if (f.exact) for (const key of Object.keys(truth)) if (!(key in resolved)) problems.push(`${where}: exact but ${key} missing`);
    if (stats) {
      stats.localsFrames++;
      const equal = Object.keys(resolved).length === Object.keys(truth).length && Object.keys(truth).every((key) => resolved[key] === truth[key]);
      if (equal) stats.resolvedEqual++;
      if (f.exact) {
        stats.exactFrames++;
        if (!equal) stats.exactWithDeleted++;
      }
    }
  }
  return problems;
}

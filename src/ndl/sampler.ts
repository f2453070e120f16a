/**
 * The trajectory sampler (spec ndl.md §5): a seeded stochastic debugger user. From each node it
 * draws an action from the policy renormalized over the actions the oracle says are available,
 * follows the oracle's `nextNode`, and stops at EXIT or at the frame/token budget.
 */
import { upperBound } from '../util/search';
import { availableActions, breakpointTargets, nextNode } from '../debugger';
import { Action, EXIT, StateTree } from '../debugger/types';
import type { TraceRecord } from '../trace/types';
import type { Rng } from '../util/rng';
import type { SamplerConfig } from './config';
import { DocumentWriter } from './format';
import { ActionKind, SPECIAL_TOKENS, STRUCTURE_TOKENS as S } from './tokens';
import type { Trajectory, TrajectoryStep } from './types';

export type TokenCounter = (text: string) => number;

const SPECIAL_RE = new RegExp(SPECIAL_TOKENS.map((t) => t.replace(/[|]/g, '\\|')).join('|'), 'g');

/**
 * The default approximate token count: each special token is 1, and the plain text between
 * them counts 1 token per 3 UTF-16 code units, rounded up per run (code and reprs tokenize
 * densely). Pass the real tokenizer's count for exact budgets. Used additively: a document's
 * count is the sum of the counts of its header, frames and closing.
 */
export const approxTokenCount: TokenCounter = (text) => {
  let n = 0;
  let last = 0;
  SPECIAL_RE.lastIndex = 0;
  for (let m = SPECIAL_RE.exec(text); m !== null; m = SPECIAL_RE.exec(text)) {
    n += Math.ceil((m.index - last) / 3) + 1;
    last = m.index + m[0].length;
  }
  return n + Math.ceil((text.length - last) / 3);
};

/** One distribution of the mixture, already restricted to the available actions. */
interface Component {
  weight: number;
  probs: Map<ActionKind, number>;
}

function components(config: SamplerConfig, direction: StateTree['direction'], available: readonly ActionKind[]): Component[] {
  const raw: Array<{ weight: number; probs: Partial<Record<ActionKind, number>> }> =
    direction === 'forward' ? config.forwardMixture : [{ weight: 1, probs: config.inverseProbs }];
  const out: Component[] = [];
  for (const c of raw) {
    const probs = new Map<ActionKind, number>();
    let mass = 0;
    for (const a of available) {
      const p = c.probs[a] ?? 0;
      if (p > 0) {
        probs.set(a, p);
        mass += p;
      }
    }
    if (mass <= 0) continue; // this component has nothing available: the others take its weight
    for (const [a, p] of probs) probs.set(a, p / mass);
    out.push({ weight: c.weight, probs });
  }
  return out;
}

/**
 * The policy's probability of each available action: every mixture component renormalized over
 * `available`, components with no available action dropped and the weights renormalized.
 */
export function actionDistribution(
  config: SamplerConfig,
  direction: StateTree['direction'],
  available: readonly ActionKind[],
): Map<ActionKind, number> {
  const comps = components(config, direction, available);
  const total = comps.reduce((s, c) => s + c.weight, 0);
  const dist = new Map<ActionKind, number>();
  for (const c of comps) for (const [a, p] of c.probs) dist.set(a, (dist.get(a) ?? 0) + (c.weight / total) * p);
  return dist;
}

/** Draws an action kind: first a mixture component by weight, then an action from it. */
function drawKind(rng: Rng, comps: Component[]): ActionKind {
  const c = comps[rng.weighted(comps.map((x) => x.weight))];
  const kinds = [...c.probs.keys()];
  return kinds[rng.weighted(kinds.map((k) => c.probs.get(k) as number))];
}

/** The action from node `i`, breakpoint target included; undefined when the policy allows nothing. */
export function drawAction(rng: Rng, config: SamplerConfig, tree: StateTree, i: number): Action | undefined {
  const comps = components(config, tree.direction, availableActions(tree, i));
  if (comps.length === 0) return undefined;
  const kind = drawKind(rng, comps);
  if (kind !== 'breakpoint') return { kind };
  const lines = lineNodes(tree);
  const firstLater = upperBound(lines, i);
  const laterCount = lines.length - firstLater;
  const { unreached } = breakpointTargets(tree, i);
  if (unreached.length > 0 && (laterCount === 0 || rng.bool(config.unreachedBreakpointProb))) {
    return { kind, target: rng.choice(unreached) };
  }
  if (laterCount === 0) throw new Error(`sampler: breakpoint offered at node ${i} without any target`);
  // Uniform over later line *nodes* (spec §5), so a line that runs often is a likelier target.
  return { kind, target: tree.nodes[lines[firstLater + rng.int(laterCount)]].src };
}

const lineNodeCache = new WeakMap<StateTree, Int32Array>();

/** Indices of the tree's line nodes, increasing. */
function lineNodes(tree: StateTree): Int32Array {
  let lines = lineNodeCache.get(tree);
  if (!lines) {
    lines = Int32Array.from(tree.nodes.filter((n) => n.event === 'line').map((n) => n.index));
    lineNodeCache.set(tree, lines);
  }
  return lines;
}


/**
 * Index of the first node below the harness's `main` (the entry function's call), or 0 when
 * the entry was never called. Nodes before it get step_into when `config.enterEntry` is set.
 */
export function entryCallIndex(tree: StateTree): number {
  const k = tree.nodes.findIndex((n) => n.depth > 0);
  return k < 0 ? 0 : k;
}

export interface SampleOptions {
  /** Token counter for `config.maxTokens` (default approxTokenCount). */
  countTokens?: TokenCounter;
}

export interface SampledDocument {
  trajectory: Trajectory;
  text: string;
}

/**
 * Samples one trajectory from the tree's first node and formats it. Budgets: at most
 * `maxFrames` frames and (if set) `maxTokens` tokens; a frame is given an action only if the
 * frame that action leads to also fits, so a cut document ends with a frame without action.
 * The first frame is always written, even if it alone is over the token budget.
 */
export function sampleDocument(
  trace: Pick<TraceRecord, 'code' | 'entry_call' | 'level'>,
  tree: StateTree,
  rng: Rng,
  config: SamplerConfig,
  options: SampleOptions = {},
): SampledDocument {
  if (tree.nodes.length === 0) throw new Error('sampleDocument: empty tree');
  const count = options.countTokens ?? approxTokenCount;
  const maxTokens = config.maxTokens ?? Infinity;
  const w = new DocumentWriter(trace, tree);
  const steps: TrajectoryStep[] = [];
  let used = count(w.text());
  const closingBudget = count(w.closing('budget'));
  const closingExit = count(w.closing('exit'));
  const stop = (node: number): SampledDocument => {
    const step = { node };
    w.push(step);
    steps.push(step);
    return { trajectory: { direction: tree.direction, steps, end: 'budget' }, text: w.finish('budget') };
  };
  const policyStart = tree.direction === 'forward' && config.enterEntry ? entryCallIndex(tree) : 0;
  let i = 0;
  for (;;) {
    const action: Action | undefined = i < policyStart ? { kind: 'step_into' } : drawAction(rng, config, tree, i);
    if (action === undefined) return stop(i);
    const step: TrajectoryStep = { node: i, action };
    const frameTokens = count(S.frameSep + w.frameText(step));
    const j = nextNode(tree, i, action);
    if (j === EXIT) {
      if (steps.length > 0 && used + frameTokens + closingExit > maxTokens) return stop(i);
      w.push(step);
      steps.push(step);
      return { trajectory: { direction: tree.direction, steps, end: 'exit' }, text: w.finish('exit') };
    }
    if (j < 0 || j >= tree.nodes.length) throw new Error(`sampler: nextNode(${i}, ${action.kind}) = ${j} is not a node`);
    if (steps.length + 2 > config.maxFrames) return stop(i);
    if (maxTokens !== Infinity) {
      const nextTokens = count(S.frameSep + w.frameTextAfter(step, { node: j }));
      if (used + frameTokens + nextTokens + closingBudget > maxTokens) return stop(i);
    }
    w.push(step);
    steps.push(step);
    used += frameTokens;
    i = j;
  }
}

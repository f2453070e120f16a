/**
 * Builds next-state tasks (the paper's protocol): walk a trajectory with the sampling policy for
 * a random number of frames, then take the action under test, format the document, and cut it
 * right after that action. The truth is read back from the full document with the same parser
 * that reads model output, so prediction and truth are compared in one representation.
 */
import { availableActions, breakpointTargets, nextNode } from '../debugger';
import { Action, EXIT, StateTree } from '../debugger/types';
import { defaultSamplerConfig, SamplerConfig } from '../ndl/config';
import { formatDocument } from '../ndl/format';
import { parseDocument } from '../ndl/parse';
import { drawAction } from '../ndl/sampler';
import { ActionKind, FORWARD_ACTIONS, INVERSE_ACTIONS, STRUCTURE_TOKENS } from '../ndl/tokens';
import type { Trajectory, TrajectoryStep } from '../ndl/types';
import { treeFor } from '../ndl/generate';
import type { TraceRecord } from '../trace/types';
import { Rng } from '../util/rng';
import type { NextStateTask, Outcome } from './types';

export const ALL_ACTIONS: readonly ActionKind[] = [...FORWARD_ACTIONS, ...INVERSE_ACTIONS];

export interface TaskOptions {
  seed: number;
  /** Tasks per (program, action). */
  perProgram: number;
  /** Most frames walked before the action under test (keeps prompts within the model's context). */
  maxPrefixFrames: number;
  sampler?: SamplerConfig;
}

/** The document text up to the start of frame `k` (0-based): everything before its `<|frame_sep|>`. */
export function cutBeforeFrame(text: string, k: number): string {
  let at = -1;
  for (let seen = 0; seen <= k; seen++) {
    at = text.indexOf(STRUCTURE_TOKENS.frameSep, at + 1);
    if (at < 0) throw new Error(`cutBeforeFrame: document has fewer than ${k + 1} frames`);
  }
  return text.slice(0, at);
}

/** A breakpoint action from node i, chosen as the sampler would; undefined when no target exists. */
function breakpointAction(rng: Rng, config: SamplerConfig, tree: StateTree, i: number): Action | undefined {
  const { reached, unreached } = breakpointTargets(tree, i);
  if (reached.length === 0 && unreached.length === 0) return undefined;
  const useUnreached = unreached.length > 0 && (reached.length === 0 || rng.bool(config.unreachedBreakpointProb));
  return { kind: 'breakpoint', target: rng.choice(useUnreached ? unreached : reached) };
}

/** Nodes visited by a policy walk of at most `frames` steps from the first node (never reaching EXIT). */
function policyWalk(rng: Rng, config: SamplerConfig, tree: StateTree, frames: number): TrajectoryStep[] {
  const steps: TrajectoryStep[] = [];
  let i = 0;
  while (steps.length < frames) {
    const action = drawAction(rng, config, tree, i);
    if (!action) break;
    const j = nextNode(tree, i, action);
    if (j === EXIT) break;
    steps.push({ node: i, action });
    i = j;
  }
  steps.push({ node: i });
  return steps;
}

/**
 * One task for `kind` on this trace, or undefined when the action is never available on the
 * walked path. The walk's last node is where the action is tried first; earlier nodes of the
 * walk are tried next (latest first), so rare actions still find a place.
 */
export function makeTask(trace: TraceRecord, kind: ActionKind, k: number, options: TaskOptions): NextStateTask | undefined {
  const direction = (INVERSE_ACTIONS as readonly string[]).includes(kind) ? 'inverse' : 'forward';
  const tree = treeFor(trace, direction);
  if (!tree) return undefined;
  const config = options.sampler ?? defaultSamplerConfig();
  const rng = Rng.from(options.seed, trace.id, 'eval-task', kind, k);
  const walk = policyWalk(rng, config, tree, rng.int(options.maxPrefixFrames + 1));
  for (let cut = walk.length - 1; cut >= 0; cut--) {
    const node = walk[cut].node;
    if (!availableActions(tree, node).includes(kind)) continue;
    const action = kind === 'breakpoint' ? breakpointAction(rng, config, tree, node) : { kind };
    if (!action) continue;
    const next = nextNode(tree, node, action);
    const steps: TrajectoryStep[] = [...walk.slice(0, cut), { node, action }];
    if (next !== EXIT) steps.push({ node: next });
    const trajectory: Trajectory = { direction, steps, end: next === EXIT ? 'exit' : 'budget' };
    const text = formatDocument(trace, tree, trajectory);
    const parsed = parseDocument(text);
    if (parsed.error) throw new Error(`eval: formatter output does not parse (${trace.id}): ${parsed.error}`);
    const truth: Outcome = next === EXIT ? { exit: tree.exitKind } : { frame: parsed.frames[cut + 1] };
    return {
      id: `${trace.id}/${kind}/${k}`,
      traceId: trace.id,
      action,
      prefix: cutBeforeFrame(text, cut + 1),
      truth,
      node,
      tree,
      trace,
    };
  }
  return undefined;
}

/** Tasks for every (trace, action kind, k); deterministic in the seed, independent of trace order. */
export function makeTasks(traces: TraceRecord[], kinds: readonly ActionKind[], options: TaskOptions): NextStateTask[] {
  const tasks: NextStateTask[] = [];
  for (const trace of traces) {
    for (const kind of kinds) {
      for (let k = 0; k < options.perProgram; k++) {
        const task = makeTask(trace, kind, k, options);
        if (task) tasks.push(task);
      }
    }
  }
  return tasks;
}

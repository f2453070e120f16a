/**
 * Builds next-state tasks (the paper's protocol): walk a trajectory with the sampling policy,
 * choose a frame of it where the action under test is available, take the action there, format
 * the document, and cut it right after that action. The truth is read back from the full
 * document with the same parser that reads model output, so prediction and truth are compared
 * in one representation.
 *
 * Prompts are never cut: with a budget (the model's context and its tokenizer), a task's prompt
 * plus its true answer must fit the context, and the frame is drawn uniformly over the frames of
 * the whole walk that fit. When none fits, the (program, action) is counted as `did_not_fit`
 * instead of being scored.
 */
import { availableActions, breakpointTargets, nextNode } from '../debugger';
import { Action, EXIT, StateTree } from '../debugger/types';
import { defaultSamplerConfig, SamplerConfig } from '../ndl/config';
import { formatDocument } from '../ndl/format';
import { parseDocument } from '../ndl/parse';
import { drawAction, entryCallIndex } from '../ndl/sampler';
import { ActionKind, FORWARD_ACTIONS, INVERSE_ACTIONS, STRUCTURE_TOKENS } from '../ndl/tokens';
import type { Trajectory, TrajectoryStep } from '../ndl/types';
import { treeFor } from '../ndl/generate';
import type { TraceRecord } from '../trace/types';
import { Rng } from '../util/rng';
import { fitsRow, type PromptBudget } from './budget';
import type { NextStateTask, Outcome } from './types';

export const ALL_ACTIONS: readonly ActionKind[] = [...FORWARD_ACTIONS, ...INVERSE_ACTIONS];

export interface TaskOptions {
  seed: number;
  /** Tasks per (program, action). */
  perProgram: number;
  /** Most frames walked before the action under test (default: the sampler's maxFrames). */
  maxPrefixFrames?: number;
  /** When given, prompt + true answer must fit the budget (budget.ts). */
  budget?: PromptBudget;
  sampler?: SamplerConfig;
}

/** The tasks, and how many (program, action, k) draws found no prompt that fits, by action. */
export interface TaskSet {
  tasks: NextStateTask[];
  didNotFit: Record<string, number>;
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

/** The first node where the policy draws actions: before it (the harness's `main`), documents always step_into. */
function policyStartOf(config: SamplerConfig, tree: StateTree): number {
  return tree.direction === 'forward' && config.enterEntry ? entryCallIndex(tree) : 0;
}

/** Nodes visited by a policy walk of at most `frames` steps from the first node (never reaching EXIT). */
function policyWalk(rng: Rng, config: SamplerConfig, tree: StateTree, frames: number): TrajectoryStep[] {
  const steps: TrajectoryStep[] = [];
  // As the sampler does for training documents: step into the entry call before drawing.
  const policyStart = policyStartOf(config, tree);
  let i = 0;
  while (steps.length < frames) {
    const action: Action | undefined = i < policyStart ? { kind: 'step_into' } : drawAction(rng, config, tree, i);
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
 * One task for `kind` on this trace; undefined when the action is never available on the walked
 * path, `'did_not_fit'` when it is but no prompt with its answer fits the budget. The frame is
 * the first that fits in a seeded random order of the walk's frames, from the entry's call on,
 * where `kind` is available, i.e. uniform over the frames that fit.
 */
export function makeTask(trace: TraceRecord, kind: ActionKind, k: number, options: TaskOptions): NextStateTask | 'did_not_fit' | undefined {
  const direction = (INVERSE_ACTIONS as readonly string[]).includes(kind) ? 'inverse' : 'forward';
  const tree = treeFor(trace, direction);
  if (!tree) return undefined;
  const config = options.sampler ?? defaultSamplerConfig();
  const rng = Rng.from(options.seed, trace.id, 'eval-task', kind, k);
  const walk = policyWalk(rng, config, tree, options.maxPrefixFrames ?? config.maxFrames);
  // The action under test is taken from the entry function's call on: where pdb's session
  // starts and the training policy draws. In the harness's `main` documents only step_into; any
  // other action there skips the whole program, which no training document does (docs/eval.md).
  const policyStart = policyStartOf(config, tree);
  const cuts = walk.map((_, cut) => cut).filter((cut) => walk[cut].node >= policyStart && availableActions(tree, walk[cut].node).includes(kind));
  rng.shuffle(cuts);
  let available = false;
  for (const cut of cuts) {
    const node = walk[cut].node;
    const action = kind === 'breakpoint' ? breakpointAction(rng, config, tree, node) : { kind };
    if (!action) continue;
    available = true;
    const next = nextNode(tree, node, action);
    const steps: TrajectoryStep[] = [...walk.slice(0, cut), { node, action }];
    if (next !== EXIT) steps.push({ node: next });
    const trajectory: Trajectory = { direction, steps, end: next === EXIT ? 'exit' : 'budget' };
    const text = formatDocument(trace, tree, trajectory);
    const prefix = cutBeforeFrame(text, cut + 1);
    if (!fitsBudget(prefix, nextFrameText(text.slice(prefix.length)), options.budget)) continue;
    const parsed = parseDocument(text);
    if (parsed.error) throw new Error(`eval: formatter output does not parse (${trace.id}): ${parsed.error}`);
    const truth: Outcome = next === EXIT ? { exit: tree.exitKind } : { frame: parsed.frames[cut + 1] };
    return { id: `${trace.id}/${kind}/${k}`, traceId: trace.id, action, prefix, truth, node, tree, trace };
  }
  return available ? 'did_not_fit' : undefined;
}

/** Whether the prompt and the true answer after it fit the budget, and the answer is one the completer can write out whole. */
export function fitsBudget(prompt: string, answer: string, budget: PromptBudget | undefined): boolean {
  if (!budget) return true;
  if (budget.maxAnswerTokens !== undefined && budget.countTokens(answer) > budget.maxAnswerTokens) return false;
  // Counted as one text, as the model reads it (the tokenizer may join across the cut).
  return fitsRow(budget, budget.countTokens(prompt + answer));
}

/** The first frame of `rest` (which starts with <|frame_sep|>) through its <|action_sep|>, or the exit token: what a perfect model writes after a prompt. */
export function nextFrameText(rest: string): string {
  const action = rest.indexOf(STRUCTURE_TOKENS.actionSep);
  if (action >= 0) return rest.slice(0, action + STRUCTURE_TOKENS.actionSep.length);
  const end = rest.indexOf(STRUCTURE_TOKENS.traceEnd);
  return end >= 0 ? rest.slice(0, end) : rest;
}

/** Tasks for every (trace, action kind, k); deterministic in the seed, independent of trace order. */
export function makeTasks(traces: TraceRecord[], kinds: readonly ActionKind[], options: TaskOptions): TaskSet {
  const tasks: NextStateTask[] = [];
  const didNotFit: Record<string, number> = {};
  for (const trace of traces) {
    for (const kind of kinds) {
      for (let k = 0; k < options.perProgram; k++) {
        const task = makeTask(trace, kind, k, options);
        if (task === 'did_not_fit') didNotFit[kind] = (didNotFit[kind] ?? 0) + 1;
        else if (task) tasks.push(task);
      }
    }
  }
  return { tasks, didNotFit };
}

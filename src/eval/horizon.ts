/**
 * `ndbg eval horizon`: how accuracy falls as the model must skip more states in one jump.
 *
 * A task is a breakpoint jump from node i to node j over N ≥ minSkipped intermediate states
 * (a breakpoint keeps its destination whatever happens before it, unlike step_over or
 * step_return, whose destination depends on the depth they start from). For a fraction φ of
 * skipped states, the model first walks k = round((1-φ)·N) `step_into` actions itself — each
 * intermediate frame sampled at temperature 0.6, top-p 0.95 and fed back as its own history —
 * then takes the breakpoint jump and predicts the frame at j greedily. φ = 1 is the direct
 * jump, φ = 0 steps all the way. The frame after a breakpoint jump shows full locals, so the
 * truth does not depend on the path. Each (task, φ) is run `samples` times.
 */
import { breakpointTargets, nextNode } from '../debugger';
import { EXIT } from '../debugger/types';
import { defaultSamplerConfig } from '../ndl/config';
import { formatDocument } from '../ndl/format';
import { treeFor } from '../ndl/generate';
import { parseDocument } from '../ndl/parse';
import { drawAction } from '../ndl/sampler';
import { actionToken } from '../ndl/tokens';
import type { TrajectoryStep } from '../ndl/types';
import type { TraceRecord } from '../trace/types';
import { Progress } from '../util/progress';
import { Rng } from '../util/rng';
import { PromptTooLongError, readPrediction, TextCompleter } from './completer';
import { scorePrediction } from './score';
import { cutBeforeFrame } from './tasks';
import type { Outcome } from './types';

export interface HorizonTask {
  id: string;
  /** Document up to node i's `<|action_sep|>` (no action yet). */
  base: string;
  target: string;
  skipped: number;
  truth: Outcome;
}

export interface HorizonOptions {
  seed: number;
  fractions: number[];
  samples: number;
  minSkipped: number;
  maxPrefixFrames: number;
  temperature: number;
  topP: number;
  quiet?: boolean;
}

export const DEFAULT_HORIZON: HorizonOptions = {
  seed: 0,
  fractions: [0, 0.25, 0.5, 0.75, 1],
  samples: 3,
  minSkipped: 4,
  maxPrefixFrames: 6,
  temperature: 0.6,
  topP: 0.95,
};

/** One horizon task per trace (or none when no breakpoint jump skips enough states). */
export function horizonTask(trace: TraceRecord, options: HorizonOptions): HorizonTask | undefined {
  const tree = treeFor(trace, 'forward');
  if (!tree) return undefined;
  const rng = Rng.from(options.seed, trace.id, 'horizon');
  const config = defaultSamplerConfig();
  const walk: TrajectoryStep[] = [];
  let i = 0;
  const frames = rng.int(options.maxPrefixFrames + 1);
  while (walk.length < frames) {
    const a = drawAction(rng, config, tree, i);
    if (!a) break;
    const j = nextNode(tree, i, a);
    if (j === EXIT) break;
    walk.push({ node: i, action: a });
    i = j;
  }
  const candidates = breakpointTargets(tree, i).reached.filter((src) => {
    const j = nextNode(tree, i, { kind: 'breakpoint', target: src });
    return j !== EXIT && j - i - 1 >= options.minSkipped;
  });
  if (candidates.length === 0) return undefined;
  const target = rng.choice(candidates);
  const action = { kind: 'breakpoint' as const, target };
  const j = nextNode(tree, i, action);
  const steps = [...walk, { node: i, action }, { node: j }];
  const text = formatDocument(trace, tree, { direction: 'forward', steps, end: 'budget' });
  const jumpPrefix = cutBeforeFrame(text, walk.length + 1);
  const base = jumpPrefix.slice(0, jumpPrefix.length - (actionToken('breakpoint') + target).length);
  return {
    id: `${trace.id}/horizon`,
    base,
    target,
    skipped: j - i - 1,
    truth: { frame: parseDocument(text).frames[walk.length + 1] },
  };
}

export interface HorizonRow {
  fraction: number;
  n: number;
  /** Samples whose walk outgrew the model's context before the jump: not scored. */
  didNotFit: number;
  full: number;
  evt: number;
  src: number;
  arg: number;
}

/**
 * One sample: the model walks k step_into frames itself, then takes the jump; scored greedily.
 * Its prompts grow with the walk; one that outgrows the context throws PromptTooLongError.
 */
async function horizonSample(task: HorizonTask, k: number, s: number, completer: TextCompleter, options: HorizonOptions) {
  const failed = { full: false, evt: false, src: false, arg: false };
  let prefix = task.base;
  for (let step = 0; step < k; step++) {
    prefix += actionToken('step_into');
    const frame = await completer.completeFrame(prefix, {
      temperature: options.temperature,
      topP: options.topP,
      seed: options.seed * 7919 + s * 104729 + step,
    });
    // A model that exits or writes garbage mid-walk cannot take the jump: the sample fails.
    if (readPrediction(prefix, frame).frame === undefined) return failed;
    prefix += frame;
  }
  prefix += actionToken('breakpoint') + task.target;
  return scorePrediction(readPrediction(prefix, await completer.completeFrame(prefix, { temperature: 0 })), task.truth);
}

/** Runs every task at every fraction; returns accuracy per fraction of skipped states. */
export async function runHorizon(traces: TraceRecord[], completer: TextCompleter, options: HorizonOptions): Promise<{ tasks: number; rows: HorizonRow[] }> {
  const tasks = traces.map((t) => horizonTask(t, options)).filter((t): t is HorizonTask => t !== undefined);
  const rows: HorizonRow[] = [];
  const progress = new Progress('horizon', tasks.length * options.fractions.length * options.samples, process.stderr, options.quiet);
  for (const fraction of options.fractions) {
    const tally = { n: 0, didNotFit: 0, full: 0, evt: 0, src: 0, arg: 0 };
    for (const task of tasks) {
      const k = Math.round((1 - fraction) * task.skipped);
      for (let s = 0; s < options.samples; s++) {
        let scores: { full: boolean; evt: boolean; src: boolean; arg: boolean };
        try {
          scores = await horizonSample(task, k, s, completer, options);
        } catch (e) {
          if (!(e instanceof PromptTooLongError)) throw e;
          tally.didNotFit++;
          progress.tick(1);
          continue;
        }
        tally.n++;
        tally.full += scores.full ? 1 : 0;
        tally.evt += scores.evt ? 1 : 0;
        tally.src += scores.src ? 1 : 0;
        tally.arg += scores.arg ? 1 : 0;
        progress.tick(1);
      }
    }
    const d = Math.max(tally.n, 1);
    rows.push({ fraction, n: tally.n, didNotFit: tally.didNotFit, full: tally.full / d, evt: tally.evt / d, src: tally.src / d, arg: tally.arg / d });
  }
  progress.finish();
  return { tasks: tasks.length, rows };
}

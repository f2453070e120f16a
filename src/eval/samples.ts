/**
 * `next_state_samples.jsonl`: one line per next-state task, so a user can read the errors
 * (as `cruxeval_samples.jsonl` does for CruxEval). Each line holds the program, the action,
 * how long the prompt is (frames, characters), the true answer, and for every predictor (the
 * model, the rule baseline, the naive one) its prediction and which components it got right.
 */
import * as fs from 'fs';
import { STRUCTURE_TOKENS } from '../ndl/tokens';
import type { NextStateResult } from './next_state';
import type { ComponentScores } from './score';
import type { Outcome, Prediction } from './types';

export interface NextStateSample {
  id: string;
  program: string;
  action: string;
  /** Breakpoint target text, when the action is a breakpoint. */
  target?: string;
  /** Frames in the prompt before the answer, and its length in characters. */
  prefixFrames: number;
  prefixChars: number;
  truth: Outcome;
  /** predictor name → what it predicted and the per-component match. */
  predictions: Record<string, { prediction: Prediction; match: ComponentScores }>;
}

/** Frames in an NDL prompt: one `<|frame_sep|>` before each. */
function frameCount(prefix: string): number {
  return prefix.split(STRUCTURE_TOKENS.frameSep).length - 1;
}

/** The samples of a result, in task order (every predictor saw the same tasks). */
export function nextStateSamples(result: NextStateResult): NextStateSample[] {
  const names = Object.keys(result.scored);
  if (names.length === 0) return [];
  return result.scored[names[0]].map((row, i) => {
    const t = row.task;
    const predictions: NextStateSample['predictions'] = {};
    for (const name of names) {
      const r = result.scored[name][i];
      predictions[name] = { prediction: r.prediction, match: r.scores };
    }
    return {
      id: t.id, program: t.traceId, action: t.action.kind, ...(t.action.target !== undefined ? { target: t.action.target } : {}),
      prefixFrames: frameCount(t.prefix), prefixChars: t.prefix.length, truth: t.truth, predictions,
    };
  });
}

/** Writes the samples as JSONL beside the run's next_state.json. */
export function writeNextStateSamples(file: string, result: NextStateResult): number {
  const samples = nextStateSamples(result);
  fs.writeFileSync(file, samples.map((s) => JSON.stringify(s)).join('\n') + (samples.length ? '\n' : ''));
  return samples.length;
}

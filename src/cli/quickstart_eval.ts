/**
 * Stage 7 of the quickstart (and of every learning-bench point): the evaluation of one trained
 * checkpoint. Next-state accuracy on the held-out programs (the model with SRC constrained, and
 * free with --free-src, beside the rule baseline and the naive one, with 95% intervals over programs and the
 * per-task samples), the copy probe, multi-step accuracy in scripted `ndbg debug` sessions on
 * the model's own history, next-state on the held-out mined real functions, and — when a
 * CruxEval file is given — the same on CruxEval's programs.
 */
import * as fs from 'fs';
import * as path from 'path';
import { copyProbeOf, formatCopyProbe, modelLogProbs, type CopyProbeResult } from '../eval/copy_probe';
import { runCruxEvalSuite, type CruxEvalSuite } from '../eval/cruxeval_suite';
import { loadModelCompleter, writeJson } from '../eval/load';
import type { ModelCompleter } from '../eval/model_completer';
import { formatTables, type NextStateResult } from '../eval/next_state';
import { nextStateSection } from '../eval/next_state_section';
import { formatSessionAccuracy, sessionAccuracy, type SessionAccuracy } from '../eval/session_accuracy';
import { formatSrcTokenAccuracy, readNdlTexts, srcTokenAccuracy, type SrcTokenAccuracy } from '../eval/src_tokens';
import type { QuickstartData } from './quickstart_data';
import { done, pct, stage, type QuickstartOptions, type StageSeconds } from './quickstart_options';

/** The eval's own options (all opt-in or with defaults, so every caller of the recipe has them). */
export interface EvalExtras {
  /** CruxEval JSONL for the real-code section (the shipped copy, SHIPPED_CRUXEVAL, by default); undefined: skipped. */
  cruxeval?: string;
  /** The fixed CruxEval sample: its first N programs. */
  cruxevalPrograms?: number;
  /** Held-out programs with a scripted debug session each way (0: none). */
  sessions?: number;
  /**
   * Also decode with SRC unconstrained (a second model column). Off by default: it doubles the
   * eval's decoding time, and the constrained decoding is what `ndbg debug` ships.
   */
  freeSrc?: boolean;
}

export const EVAL_DEFAULTS = { cruxevalPrograms: 200, sessions: 30, sessionCommands: 8 } as const;

/** A --cruxeval value: a file, or `none` to skip the real-code section. */
export function cruxevalFile(flag: string | undefined): string | undefined {
  return flag === undefined || flag === 'none' ? undefined : flag;
}

export interface RunEvaluation {
  completer: ModelCompleter;
  result: NextStateResult;
  copyProbe: CopyProbeResult;
  srcTokens: SrcTokenAccuracy;
  /** Eval tasks scored, and drawn but not fitting the context. */
  tasks: { scored: number; didNotFit: number };
  /** Next-state on the held-out mined real functions. */
  mined: NextStateResult['tables'];
  sessions: SessionAccuracy;
  cruxeval?: CruxEvalSuite;
}

const log = (line: string) => process.stderr.write(`${line.split('\n').map((l) => `      ${l}`).join('\n')}\n`);

/** Next-state on the held-out programs: both decodings and both baselines, JSON and samples. */
async function heldOutNextState(o: QuickstartOptions & EvalExtras, data: QuickstartData, completer: ModelCompleter, evalDir: string) {
  // The model as shipped (SRC constrained to program lines) and, when asked, decoding freely beside it.
  const section = await nextStateSection(data.testTraces, completer, { seed: o.seed, evalDir, suffix: '', alsoModels: o.freeSrc ? [completer.withSrcConstraint(false)] : [] });
  const { scored, didNotFit } = section.tasks;
  log(`${scored} tasks; ${pct(scored, scored + didNotFit)} fit the context (${didNotFit} did_not_fit, not scored)`);
  process.stderr.write(`${formatTables(section.result.tables)}\n`);
  return section;
}

/** Next-state on the held-out mined real functions (stage 4's split), the model beside both baselines. */
async function minedNextState(o: QuickstartOptions, data: QuickstartData, completer: ModelCompleter, evalDir: string): Promise<NextStateResult['tables']> {
  const what = `${data.minedTraces.length} held-out mined real functions (${data.evalSplit} split)`;
  const { result } = await nextStateSection(data.minedTraces, completer, { seed: o.seed, evalDir, suffix: '_mined', meta: { title: `Next-state accuracy (exact match, ${what})`, level: 'mined' } });
  log(`Mined real functions, next-state (${what}):\n${formatTables(result.tables)}`);
  return result.tables;
}

/** Stage 7 for one checkpoint; everything goes under runDir/eval. */
export async function evaluateRun(o: QuickstartOptions & EvalExtras, data: QuickstartData, runDir: string, checkpoint: string, seconds: StageSeconds): Promise<RunEvaluation> {
  const t = Date.now();
  stage(7, 'eval', `next-state accuracy on ${data.testTraces.length} distinct held-out programs (${data.evalSplit} split), every action, SRC constrained${o.freeSrc ? ' and free' : ''}, beside the rule baseline and the naive one`);
  // The eval's many prompts decode in worker processes side by side, with the same answers (decode_pool.ts).
  const completer = await loadModelCompleter({ checkpoint, backend: o.backend as never, decodeWorkers: Math.max(1, o.workers) });
  const evalDir = path.join(runDir, 'eval');
  fs.mkdirSync(evalDir, { recursive: true });
  const { result, tasks } = await heldOutNextState(o, data, completer, evalDir);
  const mined = await minedNextState(o, data, completer, evalDir);
  // Whether the model copies from its context at all (induction heads): what SRC accuracy needs.
  const probe = copyProbeOf(completer.model, completer.tokenizer, {}, completer.budget.seqLen);
  // How close it is to copying lines: moves long before exact-match SRC does (docs/eval.md).
  const srcTokens = srcTokenAccuracy(modelLogProbs(completer.model), completer.tokenizer, await readNdlTexts(data.testDocuments, Infinity), completer.budget);
  writeJson(path.join(evalDir, 'copy_probe.json'), { title: 'Copy probe (induction)', ...probe, srcTokens: { file: data.testDocuments, ...srcTokens } });
  log(`${formatCopyProbe(probe)}\n${formatSrcTokenAccuracy(srcTokens)}`);
  // What a user of the REPL sees: the model continuing its own history, checked stop by stop.
  const sessionTraces = data.testTraces.slice(0, o.sessions ?? EVAL_DEFAULTS.sessions);
  const sessions = await sessionAccuracy(sessionTraces, completer, { seed: o.seed, commands: EVAL_DEFAULTS.sessionCommands });
  writeJson(path.join(evalDir, 'sessions.json'), { title: 'Multi-step accuracy (scripted debug --verify sessions)', commands: EVAL_DEFAULTS.sessionCommands, ...sessions });
  log(formatSessionAccuracy(sessions));
  const cruxeval = await runCruxEvalSuite(completer, evalDir, { file: o.cruxeval, programs: o.cruxevalPrograms ?? EVAL_DEFAULTS.cruxevalPrograms, seed: o.seed, workers: o.workers }, log);
  done(path.join(evalDir, 'next_state.json'), t, seconds, 'eval');
  return { completer, result, mined, copyProbe: probe, srcTokens, tasks, sessions, cruxeval };
}

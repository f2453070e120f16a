/**
 * Scoring a predicted next state against the truth, per component as the paper does:
 *  - EVT: the event (or the exit kind, when the truth is an exit);
 *  - SRC: the source line;
 *  - ARG: what the frame writes after <|arg_sep|> — LOCALS as written (the delta and its ".."
 *    marker) for call/line frames, VALUE for return/exception frames;
 *  - LOCALS: the full locals after delta resolution (only for frames that show locals);
 *  - full: the whole frame (EVT, SRC and ARG) exactly right.
 * An exit counts as right in every component when the kind matches. Unparseable output is wrong
 * in every component.
 */
import { FORWARD_ACTIONS, INVERSE_ACTIONS } from '../ndl/tokens';
import type { ParsedFrame } from '../ndl/types';
import { bootstrapRate, groupByProgram } from './bootstrap';
import type { NextStateTask, Outcome, Prediction } from './types';

const ACTION_ORDER: readonly string[] = [...FORWARD_ACTIONS, ...INVERSE_ACTIONS];

/** The row of every table over all actions except continue. */
export const ALL_BUT_CONTINUE = 'all_but_continue';

export interface ComponentScores {
  full: boolean;
  evt: boolean;
  src: boolean;
  arg: boolean;
  /** undefined when the truth shows no LOCALS (a VALUE frame or an exit). */
  locals?: boolean;
  parsed: boolean;
}

function sameEntries(a: Array<[string, string]> | undefined, b: Array<[string, string]> | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function sameLocals(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  return JSON.stringify(Object.entries(a ?? {})) === JSON.stringify(Object.entries(b ?? {}));
}

function sameArg(p: ParsedFrame, t: ParsedFrame): boolean {
  if (t.value !== undefined) return p.value === t.value;
  return p.value === undefined && p.elided === t.elided && sameEntries(p.shown, t.shown);
}

/**
 * Scores a prediction. A rule baseline may carry a second outcome, `bySrc` (baseline.ts): then
 * SRC and LOCALS are scored on it and the rest on the first, so its row is the best simple rule
 * per component (its `full` is then not EVT ∧ SRC ∧ ARG of one frame). Models never set it.
 */
export function scorePrediction(prediction: Prediction & { bySrc?: Outcome }, truth: Outcome): ComponentScores {
  const main = scoreOne(prediction, truth);
  if (!prediction.bySrc) return main;
  const alt = scoreOne(prediction.bySrc, truth);
  return { ...main, src: alt.src, locals: alt.locals };
}

function scoreOne(prediction: Prediction, truth: Outcome): ComponentScores {
  const showsLocals = truth.frame !== undefined && truth.frame.value === undefined;
  if (prediction.error !== undefined) {
    return { full: false, evt: false, src: false, arg: false, locals: showsLocals ? false : undefined, parsed: false };
  }
  if (truth.exit !== undefined) {
    const ok = prediction.exit === truth.exit;
    return { full: ok, evt: ok, src: ok, arg: ok, parsed: true };
  }
  const t = truth.frame;
  const p = prediction.frame;
  if (!p) return { full: false, evt: false, src: false, arg: false, locals: showsLocals ? false : undefined, parsed: true };
  const evt = p.event === t.event;
  const src = p.src === t.src;
  const arg = sameArg(p, t);
  return {
    full: evt && src && arg,
    evt,
    src,
    arg,
    locals: showsLocals ? p.value === undefined && sameLocals(p.locals, t.locals) : undefined,
    parsed: true,
  };
}

export interface ComponentRates {
  /** Tasks scored. */
  n: number;
  /** Tasks drawn but not scored because no prompt with its answer fits the model's context. */
  didNotFit: number;
  full: number;
  evt: number;
  src: number;
  arg: number;
  /** Over the tasks whose truth shows LOCALS; null when there are none. */
  locals: number | null;
  parsed: number;
  /** Share of the scored tasks whose true answer is an exit (what "always exit" would get). */
  exitShare: number;
  /** Distinct programs the row's tasks come from (what its interval is bootstrapped over). */
  programs: number;
  /** 95% bootstrap intervals over programs (bootstrap.ts) of full and SRC. */
  ci: { full: [number, number]; src: [number, number] };
}

/** Rates of a set of scored tasks, with their bootstrap intervals over programs. */
export function aggregateTasks(rows: ScoredTask[]): ComponentRates {
  const base = aggregate(rows.map((r) => r.scores));
  const interval = (c: 'full' | 'src'): [number, number] => {
    const b = bootstrapRate(groupByProgram(rows, (r) => r.task.traceId, (r) => r.scores[c]));
    return [b.lo, b.hi];
  };
  return {
    ...base,
    exitShare: rows.length ? rows.filter((r) => r.task.truth.exit !== undefined).length / rows.length : 0,
    programs: new Set(rows.map((r) => r.task.traceId)).size,
    ci: { full: interval('full'), src: interval('src') },
  };
}

/** Rates of bare scores (no programs known: no intervals). */
export function aggregate(scores: ComponentScores[]): ComponentRates {
  const n = scores.length;
  const rate = (f: (s: ComponentScores) => boolean) => (n ? scores.filter(f).length / n : 0);
  const withLocals = scores.filter((s) => s.locals !== undefined);
  return {
    n,
    didNotFit: 0,
    full: rate((s) => s.full),
    evt: rate((s) => s.evt),
    src: rate((s) => s.src),
    arg: rate((s) => s.arg),
    locals: withLocals.length ? withLocals.filter((s) => s.locals).length / withLocals.length : null,
    parsed: rate((s) => s.parsed),
    exitShare: 0,
    programs: 0,
    ci: { full: [0, 0], src: [0, 0] },
  };
}

export interface ScoredTask {
  task: NextStateTask;
  prediction: Prediction;
  scores: ComponentScores;
}

/**
 * Rates per action kind (and 'all'), in the order the kinds first appear; `didNotFit` (tasks per
 * action that no prompt could fit) is carried into each row, so an action whose tasks all failed
 * to fit still has a row that says so.
 */
export function ratesByAction(scored: ScoredTask[], didNotFit: Record<string, number> = {}): Record<string, ComponentRates> {
  const groups = new Map<string, ScoredTask[]>();
  for (const s of scored) {
    const key = s.task.action.kind;
    if (!groups.has(key)) groups.set(key, []);
    (groups.get(key) as ScoredTask[]).push(s);
  }
  for (const k of Object.keys(didNotFit)) if (!groups.has(k)) groups.set(k, []);
  // Rows in the vocabulary's action order, whichever action the first task happened to have.
  const rank = (k: string) => {
    const i = ACTION_ORDER.indexOf(k);
    return i < 0 ? ACTION_ORDER.length : i;
  };
  const out: Record<string, ComponentRates> = {};
  for (const [k, v] of [...groups].sort(([a], [b]) => rank(a) - rank(b))) out[k] = { ...aggregateTasks(v), didNotFit: didNotFit[k] ?? 0 };
  const sum = (keys: string[]) => keys.reduce((a, k) => a + (didNotFit[k] ?? 0), 0);
  out.all = { ...aggregateTasks(scored), didNotFit: sum(Object.keys(didNotFit)) };
  // continue is "the program's outcome" and an exit almost always: a row without it shows the
  // actions where a debugger has something to predict.
  if (groups.has('continue')) {
    const rest = Object.keys(didNotFit).filter((k) => k !== 'continue');
    out[ALL_BUT_CONTINUE] = { ...aggregateTasks(scored.filter((s) => s.task.action.kind !== 'continue')), didNotFit: sum(rest) };
  }
  return out;
}

/**
 * Multi-step accuracy on the model's own history: what a user of `ndbg debug` sees. For each
 * held-out program, a seeded script of pdb commands drives a `DebugSession` with `--verify`
 * (the model continues its own predictions; the real run is only compared), and every stop
 * after the first (which is given) counts as right when its mark is `[=]`. A stop rebuilt from
 * the real run because the model's text did not parse counts as wrong. The session's own fit
 * rule decides when it re-anchors (session.ts); nothing here changes it.
 */
import type { TraceRecord } from '../trace/types';
import type { Direction } from '../debugger/vocabulary';
import { UserError } from '../util/errors';
import { Rng } from '../util/rng';
import { BatchingCompleter } from './batching_completer';
import type { TextCompleter } from './completer';
import { DebugSession } from './session';
import { ProgramSource } from './session_source';

export interface SessionAccuracyOptions {
  seed: number;
  /** Commands per session after entering the entry function (the session may end sooner). */
  commands: number;
  directions?: readonly Direction[];
}

export interface SessionAccuracy {
  sessions: number;
  /** Stops after the first, and those marked [=]. */
  stops: number;
  right: number;
  byDirection: Record<string, { sessions: number; stops: number; right: number }>;
}

const FORWARD_WEIGHTS: Array<[string, number]> = [['s', 0.4], ['n', 0.3], ['r', 0.15], ['b', 0.1], ['c', 0.05]];
const INVERSE_WEIGHTS: Array<[string, number]> = [['rs', 0.5], ['rn', 0.3], ['rc', 0.2]];

/**
 * A seeded command script: forward sessions first step into the entry (`s`, as every training
 * document does through `main`), then draw from pdb's commands; `b` targets a statement line
 * of the program (not `main`'s).
 */
export function sessionScript(rng: Rng, direction: Direction, source: ProgramSource, commands: number): string[] {
  const weights = direction === 'forward' ? FORWARD_WEIGHTS : INVERSE_WEIGHTS;
  const targets = source.statements.filter((s) => source.functionAt(s.line)?.name !== 'main');
  const script = direction === 'forward' ? ['s'] : [];
  for (let k = 0; k < commands; k++) {
    let cmd = weights[rng.weighted(weights.map(([, w]) => w))][0];
    if (cmd === 'b') cmd = targets.length > 0 ? `b ${rng.choice(targets).line}` : 's';
    script.push(cmd);
  }
  return script;
}

/** Right and total stops in a session's output lines (the first stop, from start(), is not passed in). */
export function countStops(lines: string[]): { stops: number; right: number } {
  let stops = 0;
  let right = 0;
  for (const line of lines) {
    if (/\[=\]$/.test(line)) right++;
    if (/\[=\]$|\[≠ [^\]]*\]$|\[real: not the model's\]$/.test(line)) stops++;
  }
  return { stops, right };
}

/** Runs one scripted, verified session; its stops after the first. */
async function runSession(trace: TraceRecord, direction: Direction, completer: TextCompleter, o: SessionAccuracyOptions): Promise<{ stops: number; right: number }> {
  const session = new DebugSession({ code: trace.code, call: trace.entry_call, completer, trace, direction, verify: true });
  session.start();
  const rng = Rng.from(o.seed, trace.id, 'session-script', direction);
  const total = { stops: 0, right: 0 };
  for (const cmd of sessionScript(rng, direction, session.source, o.commands)) {
    if (session.finished) break;
    const r = countStops((await session.execute(cmd)).output);
    total.stops += r.stops;
    total.right += r.right;
  }
  return total;
}

/**
 * Scripted sessions on every trace (and direction) that can be debugged; untraceable programs
 * are skipped. The sessions of a direction run side by side, so a completer that decodes in
 * batches (a model) answers their stops together.
 */
export async function sessionAccuracy(traces: TraceRecord[], completer: TextCompleter, o: SessionAccuracyOptions): Promise<SessionAccuracy> {
  const shared = completer.completeFrames ? new BatchingCompleter(completer as TextCompleter & Required<Pick<TextCompleter, 'completeFrames'>>) : completer;
  const out: SessionAccuracy = { sessions: 0, stops: 0, right: 0, byDirection: {} };
  for (const direction of o.directions ?? (['forward', 'inverse'] as const)) {
    const row = { sessions: 0, stops: 0, right: 0 };
    const runs = traces
      .filter((trace) => trace.status === 'normal')
      .map((trace) =>
        runSession(trace, direction, shared, o).catch((e: unknown) => {
          // A program the session refuses (e.g. the run never entered the entry); anything else is a bug.
          if (e instanceof UserError) return undefined;
          throw e;
        }),
      );
    for (const r of await Promise.all(runs)) {
      if (!r) continue;
      row.sessions++;
      row.stops += r.stops;
      row.right += r.right;
    }
    out.byDirection[direction] = row;
    out.sessions += row.sessions;
    out.stops += row.stops;
    out.right += row.right;
  }
  return out;
}

/** One line for the quickstart: `multi-step (scripted debug sessions): 120 of 300 stops right (40.0%) in 28 sessions`. */
export function formatSessionAccuracy(a: SessionAccuracy): string {
  const p = (r: number, n: number) => (n ? `${((100 * r) / n).toFixed(1)}%` : '-');
  const parts = Object.entries(a.byDirection).map(([d, v]) => `${d} ${v.right}/${v.stops} (${p(v.right, v.stops)})`);
  return `multi-step (scripted debug --verify sessions on held-out programs, the model's own history): ${a.right} of ${a.stops} stops right (${p(a.right, a.stops)}) in ${a.sessions} sessions; ${parts.join(', ')}`;
}

/**
 * The stops a forward session has shown, so that stepBack and reverseContinue can walk back
 * over them without a prediction (no real Python debugger can: it would have to record the
 * run). Going forward again from an earlier stop replays the session's NDL commands up to that
 * stop into a fresh session (greedy decoding and per-step seeds make the replay exact) and
 * drops the stops after it.
 */
import type { Stepper } from './stepper';
import type { StopView } from './view';

export interface ShownStop {
  model: StopView;
  real?: StopView;
  /** How many of the stepper's commands had run at this stop. */
  commands: number;
  reason: string;
}

export class Timeline {
  private readonly stops: ShownStop[] = [];
  private index = -1;

  get current(): ShownStop | undefined {
    return this.stops[this.index];
  }

  /** True when the client is looking at an earlier stop than the session's latest. */
  get inThePast(): boolean {
    return this.index < this.stops.length - 1;
  }

  record(stepper: Stepper, model: StopView, real: StopView | undefined, reason: string): ShownStop {
    this.stops.length = this.index + 1;
    const stop = { model, real, commands: stepper.commands.length, reason };
    this.stops.push(stop);
    this.index = this.stops.length - 1;
    return stop;
  }

  /** One stop back; undefined at the first. */
  back(): ShownStop | undefined {
    if (this.index <= 0) return undefined;
    return this.stops[--this.index];
  }

  /** Back to the latest earlier stop on a breakpoint line (by `lineOf`), else the first stop. */
  backToBreakpoint(breakpoints: Set<number>, lineOf: (s: ShownStop) => number | undefined): ShownStop | undefined {
    if (this.index <= 0) return undefined;
    let i = this.index - 1;
    while (i > 0 && !breakpoints.has(lineOf(this.stops[i]) ?? -1)) i--;
    this.index = i;
    return this.stops[i];
  }

  /** Keeps the stops up to the current one (the session is about to go forward from it). */
  truncate(): void {
    this.stops.length = this.index + 1;
  }
}

/** A fresh stepper brought to `commands` commands of `from` (same options, same predictions). */
export async function replay(make: () => Stepper, from: Stepper, commands: number): Promise<Stepper> {
  const s = make();
  for (const c of from.commands.slice(0, commands)) {
    const [word, arg] = c.split(' ');
    await s.act(word as never, arg !== undefined ? Number(arg) : undefined);
  }
  return s;
}

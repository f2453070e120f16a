/**
 * What `ndbg debug` prints at a stop and how it compares the model's state with the real one.
 *
 * A stop is one line, like pdb's: `> line 4 in count: n += int(c == t)  {'s': 'berry', ...}`,
 * with a tag for non-line events (`[call]`, `[return] -> 2`, `[inv_line_call]`, ...). With
 * --verify the mark `[=]` or `[≠ src, locals]` follows, and a second line shows the real state
 * when they differ.
 */
import { showsValue, type StateNode } from '../debugger';
import type { ExitKind } from '../ndl/tokens';
import type { ParsedFrame } from '../ndl/types';
import type { Location } from './session_source';

/** The model's state at a stop: a parsed frame, or an exit. */
export type ModelStop = { frame: ParsedFrame; exit?: undefined } | { exit: ExitKind; frame?: undefined };

/** The real state at the same point: a node of the oracle's tree (with its function name), or an exit. */
export type RealStop = { node: StateNode; func: string; exit?: undefined } | { exit: ExitKind; node?: undefined };

/** Components that can differ, in the order they are named. */
export type Component = 'exit' | 'evt' | 'src' | 'locals' | 'value';

/**
 * The components of the model's stop that differ from the real one. LOCALS are compared as the
 * state the model claims (delta resolved against its own history) with the real frame's full
 * locals, by name, order ignored. NDL cannot say that a variable is gone (spec §3: deletions
 * are not marked; in an inverse document a variable not yet assigned keeps its later value), so
 * a variable the model carries over from an earlier frame but the real frame lacks is not held
 * against it; every variable this frame writes out must be right. When the delta's base is a
 * state no frame shows (`exact` false), variables the model does not know are not counted.
 */
export function compareStops(model: ModelStop, real: RealStop): Component[] {
  if (model.exit !== undefined || real.exit !== undefined) return model.exit === real.exit ? [] : ['exit'];
  const p = model.frame;
  const r = real.node;
  const out: Component[] = [];
  if (p.event !== r.event) out.push('evt');
  if (p.src !== r.src) out.push('src');
  if (showsValue(r.event)) {
    if (p.value !== r.value) out.push('value');
  } else if (!localsMatch(p, r.locals)) out.push('locals');
  return out;
}

function localsMatch(p: ParsedFrame, real: Record<string, string>): boolean {
  if (p.locals === undefined) return false;
  const has = (o: Record<string, string>, k: string) => Object.prototype.hasOwnProperty.call(o, k);
  for (const [k, v] of Object.entries(real)) {
    if (has(p.locals, k)) {
      if (p.locals[k] !== v) return false;
    } else if (p.exact) return false;
  }
  for (const [k, v] of p.shown ?? []) if (!has(real, k) || real[k] !== v) return false;
  return true;
}

/** `{'s': 'berry', 'n': 0}`: how Python prints locals(); `...` first when some are unknown. */
export function formatLocals(locals: Record<string, string>, partial = false): string {
  const items = Object.entries(locals).map(([k, v]) => `'${k}': ${v}`);
  if (partial) items.unshift('...');
  return `{${items.join(', ')}}`;
}

function formatValue(value: string | null | undefined): string {
  return value === null ? '-> (no value: an exception left the frame)' : `-> ${value}`;
}

const EXIT_TEXT: Record<ExitKind, string> = {
  normal: 'the program finished',
  error: 'an uncaught exception left the entry function',
  never: 'the run hit the step or time limit and never finished',
  inv_exit_entry: "back before the entry function's call",
};

export function formatExit(kind: ExitKind): string {
  return `--Exit-- ${EXIT_TEXT[kind]} (${kind === 'inv_exit_entry' ? 'inv_exit_entry' : `exit_${kind}`})`;
}

/** The body of a stop line without the leading `> `. */
export function describeFrame(
  event: string,
  src: string,
  where: Location,
  arg: { locals?: Record<string, string>; partial?: boolean; value?: string | null },
): string {
  const line = where.line === undefined ? 'line ?' : `line ${where.line}`;
  const tag = event === 'line' || event === 'inv_line' ? '' : ` [${event}]`;
  const state = showsValue(event) ? formatValue(arg.value) : formatLocals(arg.locals ?? {}, arg.partial);
  return `${line} in ${where.func}${tag}: ${src.trim()}    ${state}`;
}

export function describeModel(stop: ModelStop, where: Location): string {
  if (stop.exit !== undefined) return formatExit(stop.exit);
  const f = stop.frame;
  return describeFrame(f.event, f.src, where, { locals: f.locals, partial: !f.exact, value: f.value });
}

export function describeReal(stop: RealStop): string {
  if (stop.exit !== undefined) return formatExit(stop.exit);
  const n = stop.node;
  return describeFrame(n.event, n.src, { line: n.line, func: stop.func }, { locals: n.locals, value: n.value });
}

/** The mark of a stop taken from the real run because the model's output did not parse. */
export const REAL_STOP_MARK = '[real: not the model\'s]';

/** `[=]` or `[≠ src, locals]`. */
export function mark(diff: Component[]): string {
  return diff.length === 0 ? '[=]' : `[≠ ${diff.join(', ')}]`;
}

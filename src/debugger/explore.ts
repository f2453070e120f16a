/**
 * Walking a trace with a list of debugger actions, as `ndbg oracle` does: parsing the action
 * list, following the oracle, and writing the states visited for a person (pdb-like) or as JSON.
 */
import { UserError } from '../util/errors';
import { ActionKind, FORWARD_ACTIONS, INVERSE_ACTIONS } from './vocabulary';
import { nextNode } from './actions';
import { Action, EXIT, StateTree } from './types';

/** pdb's one-letter commands are accepted for the forward actions. */
const ALIASES: Record<string, ActionKind> = { s: 'step_into', n: 'step_over', r: 'step_return', c: 'continue' };
const KINDS = new Set<string>([...FORWARD_ACTIONS, ...INVERSE_ACTIONS]);

function isActionStart(piece: string): boolean {
  const t = piece.trim();
  return KINDS.has(t) || t in ALIASES || /^(breakpoint|b):/.test(t.trimStart());
}

/**
 * Parses "step_into,step_over,breakpoint:    return x". A breakpoint's target is everything
 * after `breakpoint:` (or `b:`) verbatim, indentation kept; since a target may itself contain
 * commas, a comma-separated piece that is not an action continues the previous breakpoint.
 */
export function parseActions(text: string): Action[] {
  const actions: Action[] = [];
  for (const piece of text.split(',')) {
    if (!isActionStart(piece)) {
      const last = actions[actions.length - 1];
      if (last?.kind === 'breakpoint') {
        last.target += ',' + piece;
        continue;
      }
      throw new UserError(
        `--actions: unknown action ${JSON.stringify(piece.trim())} (use ${[...KINDS].join(', ')}, s/n/r/c, or breakpoint:SRC)`,
      );
    }
    const m = /^\s*(breakpoint|b):(.*)$/s.exec(piece);
    if (m) actions.push({ kind: 'breakpoint', target: m[2] });
    else actions.push({ kind: ALIASES[piece.trim()] ?? (piece.trim() as ActionKind) });
  }
  return actions;
}

export type ExploreEntry =
  | { node: number; event: string; line: number; depth: number; src: string; locals: Record<string, string>; value: string | null }
  | { event: 'exit'; kind: string };

function entryAt(tree: StateTree, j: number): ExploreEntry {
  if (j === EXIT) return { event: 'exit', kind: tree.exitKind };
  const n = tree.nodes[j];
  return { node: j, event: n.event, line: n.line, depth: n.depth, src: n.src, locals: n.locals, value: n.value };
}

/** The start node and one entry per action; actions after an exit are refused. */
export function explore(tree: StateTree, actions: Action[]): { start: ExploreEntry; steps: ExploreEntry[] } {
  const forward = tree.direction === 'forward';
  let i = tree.nodes.length > 0 ? 0 : EXIT;
  const start = entryAt(tree, i);
  const steps: ExploreEntry[] = [];
  actions.forEach((a, k) => {
    const allowed: readonly string[] = forward ? FORWARD_ACTIONS : INVERSE_ACTIONS;
    if (!allowed.includes(a.kind)) {
      throw new UserError(`--actions: ${a.kind} is not a${forward ? ' forward' : 'n inverse'} action (${allowed.join(', ')})`);
    }
    if (i === EXIT) throw new UserError(`--actions: action ${k + 1} (${a.kind}) comes after the run already exited`);
    i = nextNode(tree, i, a);
    steps.push(entryAt(tree, i));
  });
  return { start, steps };
}

function describeAction(a: Action | undefined): string {
  if (!a) return 'start';
  return a.kind === 'breakpoint' ? `breakpoint ${JSON.stringify(a.target)}` : a.kind;
}

/** One pdb-like block per state: `> line N (depth D) event`, the source line, then locals or value. */
export function formatExplore(result: { start: ExploreEntry; steps: ExploreEntry[] }, actions: Action[]): string {
  const out: string[] = [];
  [result.start, ...result.steps].forEach((e, k) => {
    const head = `(${describeAction(k === 0 ? undefined : actions[k - 1])})`;
    if (e.event === 'exit') {
      out.push(`${head} --Exit-- ${(e as { kind: string }).kind}`);
      return;
    }
    const n = e as Extract<ExploreEntry, { node: number }>;
    out.push(`${head} #${n.node} ${n.event} at line ${n.line}, depth ${n.depth}`);
    out.push(`-> ${n.src}`);
    if (n.event.endsWith('return') || n.event.endsWith('exception')) out.push(`   value: ${n.value === null ? '(none: left by an exception)' : n.value}`);
    out.push(`   locals: ${JSON.stringify(n.locals)}`);
  });
  return out.join('\n') + '\n';
}

/** The `--json` form: one entry per action, `{event, line, depth, src, locals}` (plus node and value) or `{event: "exit", kind}`. */
export function exploreJson(result: { steps: ExploreEntry[] }): string {
  return JSON.stringify(result.steps);
}

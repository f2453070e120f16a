/**
 * The pdb differential check (spec ndl.md §6): seeded random action scripts walked through the
 * oracle and through real pdb; every stop must agree on event, line, depth, locals and value.
 *
 * Documented disagreement class — generators: bdb treats a generator frame as one frame across
 * its yields (`next` and `return` in a generator frame do not stop at a yield; `return` runs
 * until a StopIteration/GeneratorExit elsewhere), while the state tree, like the trace, makes
 * every resumption its own invocation that ends at the yield. The oracle keeps the tree's
 * semantics (the model sees each yield as a return frame); a disagreement that bdb's generator
 * rules or generator closes pdb never sees explain exactly (generator_class.ts) is counted in
 * the `generator` class, and the rest of that script is not compared (the two have diverged).
 */
import type { TraceRecord } from '../trace/types';
import { Rng } from '../util/rng';
import { availableActions, breakpointTargets, nextNode } from './actions';
import { isGeneratorDisagreement } from './generator_class';
import { HarnessOptions, PdbExit, PdbJob, PdbResult, PdbRun, PdbStop, pdbCommands, RepoPdbJob, runPdbHarness, runRepoPdbHarness } from './pdb';
import { buildForwardTree } from './tree';
import { Action, EXIT, StateTree } from './types';

export interface ScriptOptions {
  /** Scripts per program. */
  scripts: number;
  /** Actions per script at most (a script also ends at EXIT). */
  maxActions: number;
  /** Breakpoint actions per script at most (each script draws 0..max). */
  maxBreakpoints: number;
  /** Probability that a breakpoint targets a line never reached again. */
  unreachedProb: number;
}

export const DEFAULT_SCRIPT_OPTIONS: ScriptOptions = { scripts: 20, maxActions: 25, maxBreakpoints: 2, unreachedProb: 0.2 };

const STEP_KINDS = ['step_into', 'step_over', 'step_return', 'continue'] as const;
const STEP_WEIGHTS = [0.5, 0.3, 0.17, 0.03];

/** One seeded action script from node 0, following the oracle so that every action is valid. */
export function randomScript(tree: StateTree, rng: Rng, options: ScriptOptions): Action[] {
  const actions: Action[] = [];
  if (tree.nodes.length === 0) return actions;
  // Breakpoints are placed at random positions of the script rather than drawn per step, so
  // that each script has exactly 0..maxBreakpoints of them.
  const nBreak = rng.range(0, options.maxBreakpoints);
  const breakAt = new Set<number>();
  for (let k = 0; k < nBreak; k++) breakAt.add(rng.int(options.maxActions));
  let i = 0;
  for (let k = 0; k < options.maxActions && i !== EXIT; k++) {
    let action: Action;
    if (breakAt.has(k) && availableActions(tree, i).includes('breakpoint')) {
      const { reached, unreached } = breakpointTargets(tree, i);
      const pool = unreached.length > 0 && (reached.length === 0 || rng.bool(options.unreachedProb)) ? unreached : reached;
      action = { kind: 'breakpoint', target: rng.choice(pool) };
    } else {
      action = { kind: STEP_KINDS[rng.weighted(STEP_WEIGHTS)] };
    }
    actions.push(action);
    i = nextNode(tree, i, action);
  }
  return actions;
}

export type Verdict = 'agree' | 'generator' | 'other';

export interface StepMismatch {
  id: string;
  script: number;
  /** 0 = the first stop (main's call), k = after the k-th action. */
  step: number;
  action: Action | null;
  verdict: Exclude<Verdict, 'agree'>;
  expected: unknown;
  actual: unknown;
}

export interface ScriptComparison {
  /** Stops compared and found equal. */
  agreed: number;
  /** Stops compared: all of the script's (first stop + one per action), or up to the first mismatch. */
  compared: number;
  mismatch?: StepMismatch;
}

function expectedAt(tree: StateTree, j: number): Record<string, unknown> {
  if (j === EXIT) return { event: 'exit', kind: tree.exitKind };
  const n = tree.nodes[j];
  return { event: n.event, line: n.line, depth: n.depth, locals: n.locals, value: n.value, traceIndex: n.traceIndex };
}

/** Whether a pdb stop is the oracle's node j (or exit). */
export function stopMatches(tree: StateTree, j: number, stop: PdbStop | PdbExit | undefined): boolean {
  if (stop === undefined) return false;
  if (j === EXIT) return stop.event === 'exit' && stop.kind === tree.exitKind;
  if (stop.event === 'exit') return false;
  const n = tree.nodes[j];
  // A call node's line is the `def` line (spec §2); pdb's frame line is that too except at a
  // generator's resumption, where it is the line of the yield.
  const line = stop.event === 'call' ? stop.firstline : stop.line;
  if (n.event !== stop.event || n.line !== line || n.depth !== stop.depth) return false;
  if (stop.ordinal !== null && stop.ordinal !== n.traceIndex) return false;
  if (!sameLocals(n.locals, stop.locals, stop.ordinal !== null)) return false;
  if (n.event === 'return' || n.event === 'exception') return (n.value ?? 'None') === stop.value;
  return true;
}

/**
 * Locals as a mapping, and in counting mode also in order (see pdb_harness.py: the order of
 * a 3.11 f_locals dict depends on when it was read, and only counting mode reads it at every
 * event like the tracer).
 */
function sameLocals(a: Record<string, string>, b: Record<string, string>, ordered: boolean): boolean {
  const ea = Object.entries(a);
  const eb = Object.entries(b);
  if (ea.length !== eb.length) return false;
  if (ordered) return JSON.stringify(ea) === JSON.stringify(eb);
  return ea.every(([k, v]) => Object.prototype.hasOwnProperty.call(b, k) && b[k] === v);
}

/** Compares one pdb run with the oracle for the same script. */
export function compareRun(id: string, script: number, tree: StateTree, actions: Action[], run: PdbRun): ScriptComparison {
  const fail = (step: number, verdict: Exclude<Verdict, 'agree'>, expected: unknown, actual: unknown): ScriptComparison => ({
    agreed: step,
    compared: step + 1,
    mismatch: { id, script, step, action: step > 0 ? actions[step - 1] : null, verdict, expected, actual },
  });
  if (run.failure) return fail(0, 'other', 'a pdb run', run.failure);
  let i = tree.nodes.length > 0 ? 0 : EXIT;
  if (!stopMatches(tree, i, run.stops[0])) return fail(0, 'other', expectedAt(tree, i), run.stops[0]);
  for (let k = 0; k < actions.length; k++) {
    const j = nextNode(tree, i, actions[k]);
    const stop = run.stops[k + 1];
    if (!stopMatches(tree, j, stop)) {
      const generator = isGeneratorDisagreement(tree, i, actions[k], stop, stopMatches);
      return fail(k + 1, generator ? 'generator' : 'other', expectedAt(tree, j), stop ?? 'no stop');
    }
    i = j;
    if (i === EXIT) return { agreed: k + 2, compared: k + 2 };
  }
  return { agreed: actions.length + 1, compared: actions.length + 1 };
}

export interface DifferentialOptions extends ScriptOptions {
  seed: number;
  /** Counting mode for every program (not only truncated ones): also checks trace indices. */
  count: boolean;
  workers: number;
  /** Seconds per pdb run. */
  timeout: number;
  onProgress?: (done: number, total: number) => void;
}

export interface DifferentialReport {
  programs: number;
  scripts: number;
  /** Stops compared (a script is compared up to its first disagreement). */
  steps: number;
  agreedSteps: number;
  /** Programs whose every script agreed at every step. */
  programsAgreed: number;
  /** Programs whose scripts agreed except for documented-class disagreements. */
  programsAgreedOrDocumented: number;
  byVerdict: Record<Exclude<Verdict, 'agree'>, number>;
  /** How many actions of each kind the scripts hold ("breakpoint_unreached": targets never hit). */
  actions: Record<string, number>;
  /** Agreed exits by kind. */
  exits: Record<string, number>;
  /** Programs with at least one disagreement of each class. */
  programsByVerdict: Record<Exclude<Verdict, 'agree'>, number>;
  mismatches: StepMismatch[];
  /** Traces made by another Python version than the one pdb ran under (their disagreements mean little). */
  pythonMismatches: string[];
}

/** Scripts for every trace, pdb on all of them, and the comparison. */
export async function runDifferential(traces: TraceRecord[], options: DifferentialOptions): Promise<DifferentialReport> {
  const prepared = traces.map((trace) => {
    const tree = buildForwardTree(trace);
    const scripts: Action[][] = [];
    for (let s = 0; s < options.scripts; s++) scripts.push(randomScript(tree, Rng.from(options.seed, trace.id, 'pdb-script', s), options));
    return { trace, tree, scripts };
  });
  let done = 0;
  const harness = { workers: options.workers, onResult: () => options.onProgress?.(++done, traces.length) };
  const results = await runJobs(prepared, options, harness);
  const report: DifferentialReport = {
    programs: traces.length,
    scripts: 0,
    steps: 0,
    agreedSteps: 0,
    programsAgreed: 0,
    programsAgreedOrDocumented: 0,
    byVerdict: { generator: 0, other: 0 },
    actions: {},
    exits: {},
    programsByVerdict: { generator: 0, other: 0 },
    mismatches: [],
    pythonMismatches: [],
  };
  prepared.forEach(({ trace, tree, scripts }, p) => {
    if (trace.python !== results[p].python) report.pythonMismatches.push(`${trace.id}: traced with ${trace.python}, pdb ran ${results[p].python}`);
    const seen = new Set<string>();
    scripts.forEach((actions, s) => {
      const c = compareRun(trace.id, s, tree, actions, results[p].runs[s]);
      let i = 0;
      for (const a of actions) {
        const j = nextNode(tree, i, a);
        const key = a.kind === 'breakpoint' && j === EXIT ? 'breakpoint_unreached' : a.kind;
        report.actions[key] = (report.actions[key] ?? 0) + 1;
        i = j;
      }
      if (i === EXIT && !c.mismatch) report.exits[tree.exitKind] = (report.exits[tree.exitKind] ?? 0) + 1;
      report.scripts++;
      report.steps += c.compared;
      report.agreedSteps += c.agreed;
      if (c.mismatch) {
        report.byVerdict[c.mismatch.verdict]++;
        seen.add(c.mismatch.verdict);
        report.mismatches.push(c.mismatch);
      }
    });
    if (seen.size === 0) report.programsAgreed++;
    if (!seen.has('other')) report.programsAgreedOrDocumented++;
    for (const v of seen) report.programsByVerdict[v as Exclude<Verdict, 'agree'>]++;
  });
  return report;
}

/**
 * pdb on every prepared trace, results in trace order: function-level traces through
 * pdb_harness.py, repository-level ones (level `repository`) through repo_pdb_harness.py.
 */
async function runJobs(
  prepared: Array<{ trace: TraceRecord; tree: StateTree; scripts: Action[][] }>,
  options: DifferentialOptions,
  harness: HarnessOptions,
): Promise<PdbResult[]> {
  const plain = prepared.filter((p) => p.trace.level !== 'repository');
  const repo = prepared.filter((p) => p.trace.level === 'repository');
  const [a, b] = await Promise.all([
    runPdbHarness(plain.map(({ trace, tree, scripts }) => pdbJob(trace, options.count, options.timeout, scripts.map((s) => commandsFor(tree, s)))), harness),
    runRepoPdbHarness(repo.map(({ trace, tree, scripts }) => repoPdbJob(trace, options.timeout, scripts.map((s) => commandsFor(tree, s, trace.scope?.repo)))), harness),
  ]);
  const byTrace = new Map<(typeof prepared)[number], PdbResult>();
  plain.forEach((p, k) => byTrace.set(p, a[k]));
  repo.forEach((p, k) => byTrace.set(p, b[k]));
  return prepared.map((p) => byTrace.get(p) as PdbResult);
}

/** The function-level harness job of a trace. */
export function pdbJob(trace: TraceRecord, count: boolean, timeout: number, scripts: string[][]): PdbJob {
  return {
    id: trace.id,
    code: trace.code,
    entry_call: trace.entry_call,
    limit: trace.status === 'never' ? trace.events.length : null,
    count,
    timeout,
    scripts,
  };
}

/** The repository-level harness job of a scoped trace (src/ndl/repo_scope.ts). */
export function repoPdbJob(trace: TraceRecord, timeout: number, scripts: string[][]): RepoPdbJob {
  const scope = trace.scope;
  if (!scope) throw new Error(`trace ${trace.id}: a repository-level trace without scope`);
  return {
    id: trace.id,
    root: scope.repo,
    path: scope.path,
    entry: scope.entry,
    invocation: scope.invocation,
    repr_cap: scope.repr_cap,
    seed: 0,
    timeout,
    scripts,
  };
}

/** The pdb command lines of a script (a breakpoint is `tbreak [FILE:]N` then `continue`). */
export function commandsFor(tree: StateTree, actions: Action[], root?: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (const a of actions) {
    const cmds = pdbCommands(tree, i, a, root);
    if (!cmds) throw new Error(`breakpoint target ${JSON.stringify(a.target)} is not a line of the program`);
    out.push(...cmds);
    i = nextNode(tree, i, a);
    if (i === EXIT) break;
  }
  return out;
}

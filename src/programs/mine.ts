import { assetPath } from '../util/paths';
import { runPythonScript } from '../util/python_script';
import { Rng } from '../util/rng';
import type { FilterConfig } from './config';
import { filterRecords, sameTraceAgain } from './filters';
import type { CorpusFile, Provenance } from './mine_corpus';
import { candidateCalls, redrawCalls, type Call, type FunctionHints } from './mine_inputs';
import { codeFacts } from './normalize';
import { programKeys } from './splits';
import { traceFingerprint } from './tracestats';
import type { ProgramRecord, ProgramRun, Tracer } from './types';

/**
 * `ndbg programs mine`: real functions from a code corpus, each with several inputs whose
 * traces differ (docs/programs.md, "Mined programs"). mine_extract.py cuts out functions that
 * run standalone; mine_inputs.ts proposes calls; every call runs in the tracer given (the
 * sandbox in the CLI) through the generator's own record filters (determinism twice, step
 * budget, forbidden imports and builtins), then the mining filters below.
 */

/** Modules mined code may import: pure, deterministic standard-library modules. */
export const MINE_ALLOW_IMPORTS = [
  '__future__', 'abc', 'array', 'ast', 'base64', 'binascii', 'bisect', 'calendar', 'cmath', 'codecs', 'collections', 'colorsys',
  'contextlib', 'copy', 'copyreg', 'csv', 'dataclasses', 'datetime', 'decimal', 'difflib', 'enum', 'errno', 'fnmatch',
  'fractions', 'functools', 'hashlib', 'heapq', 'html', 'io', 'ipaddress', 'itertools', 'json', 'keyword', 'math', 'numbers',
  'operator', 'posixpath', 'pprint', 're', 'reprlib', 'shlex', 'statistics', 'string', 'stringprep', 'struct', 'textwrap',
  'types', 'typing', 'unicodedata', 'warnings', 'zlib',
];

/** What the mining tracer's workers import before forking (`SandboxOptions.preimport`): the
 * allow-list but `statistics`, which imports `random` (seeded per program, on import). */
export const MINE_PREIMPORT = MINE_ALLOW_IMPORTS.filter((m) => m !== 'statistics');

/** Exceptions that mean the input was of the wrong type, not that the code raised on purpose. */
const WRONG_INPUT = /^(TypeError|AttributeError|NameError|ImportError|ModuleNotFoundError|RecursionError|NotImplementedError|UnboundLocalError)\b/;

export interface MineOptions {
  files: CorpusFile[];
  /** Runs every proposed call. */
  tracer: Tracer;
  /**
   * Runs the determinism check of the calls that would be kept (default: `tracer`). Give a
   * tracer that runs each program in a fresh process when `tracer` shares processes beyond
   * purity.py's strict rule: a kept call's trace is then the one any later stage computes.
   */
  checkTracer?: Tracer;
  seed: number;
  /** Calls proposed per function. */
  candidates: number;
  /**
   * Calls re-drawn per function at most from drawn calls that failed on their input (a wrong
   * type: the parameters the message blames, drawn again of the kind it asks for; a KeyError:
   * the key put into the dict argument), over up to two rounds. 0: none.
   */
  redraws?: number;
  /** Kept calls per function at most (distinct traces). */
  perFunction: number;
  /** Functions with fewer distinct traced calls are dropped. */
  minPerFunction: number;
  /** Line events of the function's own frames a kept call must have. */
  minLines: number;
  maxFunctionLines: number;
  maxCodeLines: number;
  maxEvents: number;
  /** Evaluation-set program keys (normalized AST): matching functions are dropped. */
  against?: Set<string>;
  /**
   * Which functions to call, by program key (the key a split is drawn from, splits.ts); the rest
   * are counted as `not_wanted` and never run. Every function's calls come from its own seeded
   * stream, so those mined are the ones a whole mine keeps for them.
   */
  wanted?: (programKey: string) => boolean;
  python?: string;
  /** Functions mined per batch (default 64); several batches are in flight at once. The
   * records do not depend on it: each function's calls come from its own seeded stream. */
  batchSize?: number;
  onProgress?: (functionsDone: number, functionsTotal: number, kept: number) => void;
}

export interface MinedRecord extends ProgramRecord {
  source: Provenance & { file: string; module: string; function: string; line: number };
}

export interface MineSummary {
  files: number;
  modules: number;
  functionsSeen: number;
  extraction: Record<string, number>;
  functionsExtracted: number;
  callsTried: number;
  /** Of callsTried, those re-drawn from a wrong-type failure; and how many of those were kept. */
  callsRedrawn: number;
  keptFromRedraws: number;
  callRejections: Record<string, number>;
  functionRejections: Record<string, number>;
  functionsKept: number;
  recordsKept: number;
  /** Kept functions per package. */
  perPackage: Record<string, number>;
  /** Calls tried per package: where the time went (with `perPackage`, which packages pay). */
  callsPerPackage: Record<string, number>;
  callsFromCorpus: number;
  /** Wall seconds of the extraction (one Python process, before any call runs). */
  extractionSeconds: number;
  /** The extraction's peak resident memory in MiB: it holds every module's tree at once. */
  extractionPeakMiB: number;
}

interface Extracted extends FunctionHints {
  kind: 'function';
  module: string;
  path: string;
  origin: Provenance;
  function: string;
  line: number;
  code: string;
}

async function runExtractor(python: string, request: unknown): Promise<{ functions: Extracted[]; summary: { modules: number; functions: number; counts: Record<string, number>; peak_rss_mib: number } }> {
  const stdout = await runPythonScript(python, assetPath('src/programs/mine_extract.py'), JSON.stringify(request));
  const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const summary = lines.pop();
  return { functions: lines as Extracted[], summary };
}

/** Batches of functions mined at once (see mineFunctions). */
const BATCHES_IN_FLIGHT = 3;

const bump = (m: Record<string, number>, k: string, by = 1) => {
  m[k] = (m[k] ?? 0) + by;
};

/** Line events at depth >= 1 (the function and what it calls; not the harness's `main`). */
function ownLines(run: ProgramRun): number {
  return run.events.filter((e) => e.depth >= 1 && e.event === 'line').length;
}

export async function mineFunctions(opts: MineOptions, write: (r: MinedRecord) => void): Promise<MineSummary> {
  const python = opts.python ?? 'python3';
  const mined = opts.files.filter((f) => !f.test);
  const relOf = new Map(opts.files.map((f) => [f.path, f.rel]));
  const extractionStart = Date.now();
  const { functions, summary } = await runExtractor(python, {
    files: mined.map((f) => ({ path: f.path, module: f.module, origin: f.origin })),
    callsite_files: opts.files.filter((f) => f.test).map((f) => ({ path: f.path, module: f.module, origin: f.origin })),
    allow_imports: MINE_ALLOW_IMPORTS,
    max_function_lines: opts.maxFunctionLines,
    max_code_lines: opts.maxCodeLines,
  });
  const extractionSeconds = (Date.now() - extractionStart) / 1000;
  const extraction = { ...summary.counts };
  const functionRejections: Record<string, number> = {};
  const callRejections: Record<string, number> = {};
  // One key per function's code: the same helper text reached from two modules is one program.
  const keys = await programKeys(functions.map((f) => ({ code: f.code })));
  const seenKeys = new Set<string>();
  const live: number[] = [];
  functions.forEach((f, i) => {
    if (opts.against?.has(keys[i])) bump(functionRejections, 'contaminated');
    else if (seenKeys.has(keys[i])) bump(functionRejections, 'duplicate_function');
    else {
      seenKeys.add(keys[i]);
      if (opts.wanted && !opts.wanted(keys[i])) bump(functionRejections, 'not_wanted');
      else live.push(i);
    }
  });
  const filter: FilterConfig = {
    maxEvents: opts.maxEvents,
    minChars: 20,
    maxChars: 20000,
    maxLines: opts.maxCodeLines + 20,
    allowImports: MINE_ALLOW_IMPORTS,
    // Checked below, on the calls that pass the mining filters only (sameTraceAgain).
    checkDeterminism: false,
    rejectUnplannedErrors: false,
  };
  const out: MineSummary = {
    files: opts.files.length,
    modules: summary.modules,
    functionsSeen: summary.functions,
    extraction,
    functionsExtracted: functions.length,
    callsTried: 0,
    callsRedrawn: 0,
    keptFromRedraws: 0,
    callRejections,
    functionRejections,
    functionsKept: 0,
    recordsKept: 0,
    perPackage: {},
    callsPerPackage: {},
    callsFromCorpus: 0,
    extractionSeconds,
    extractionPeakMiB: summary.peak_rss_mib,
  };
  const redraws = opts.redraws ?? 0;
  type Kept = Array<Array<{ rec: ProgramRecord; fp: string }>>;
  // One batch's calls, rounds and re-draws; its counts go into `out` (sums, so batches may
  // overlap), its keeps are returned and written in batch order.
  const mineBatch = async (batch: Extracted[]): Promise<Kept> => {
    // One stream per function: its calls do not depend on which other functions were mined.
    const rngs = batch.map((f) => Rng.from(opts.seed, 'mine', f.module, f.function));
    const tried = batch.map(() => new Set<string>());
    const redrawLeft = batch.map(() => redraws);
    const kept: Kept = batch.map(() => []);
    // The code's static facts, once per function: every call of it shares its code.
    const batchFacts = await codeFacts(batch.map((f) => f.code));
    let pending: Array<{ f: number; call: Call; redrawn: boolean }> = [];
    // Candidates go in two waves: the second only for functions the first left short of
    // `perFunction` (in one wave, 7% of all calls were surplus to a function's keeps).
    const secondWave: Call[][] = batch.map(() => []);
    batch.forEach((f, j) => {
      const calls = candidateCalls(f, opts.candidates, rngs[j]);
      const firstWave = Math.max(opts.perFunction, Math.ceil(calls.length / 2));
      calls.forEach((call, k) => {
        tried[j].add(call.input);
        if (k < firstWave) pending.push({ f: j, call, redrawn: false });
        else secondWave[j].push(call);
      });
    });
    for (let round = 0; pending.length; round++) {
      const records: ProgramRecord[] = pending.map(({ f, call }, i) => ({ id: `${batch[f].module}.${batch[f].function}@${round}.${i}`, code: batch[f].code, input: call.input, entry: batch[f].function }));
      out.callsTried += records.length;
      for (const { f } of pending) bump(out.callsPerPackage, batch[f].origin.package);
      out.callsRedrawn += pending.filter((p) => p.redrawn).length;
      const facts = pending.map(({ f }) => batchFacts[f]);
      const outcomes = await filterRecords(records, facts, opts.tracer, filter, undefined, { keepRuns: true });
      const failed: Array<{ f: number; args: string[]; error: string }> = [];
      const tentative: Array<{ i: number; fp: string }> = [];
      // Per function, the fingerprints of this round's would-be keeps.
      const tentativeFps = batch.map(() => [] as string[]);
      outcomes.forEach((o, i) => {
        const { f, call } = pending[i];
        if (!o.ok || !o.run) return bump(callRejections, o.reason ?? 'unknown');
        const run = o.run;
        // A drawn call that failed on its input (a wrong type, a missing key) is re-drawn.
        const redraw = () => run.status === 'error' && call.args && failed.push({ f, args: call.args, error: run.error ?? '' });
        if (run.status === 'error' && WRONG_INPUT.test(run.error ?? '')) {
          redraw();
          return bump(callRejections, 'wrong_input_type');
        }
        if (ownLines(run) < opts.minLines) {
          redraw();
          return bump(callRejections, 'too_few_lines');
        }
        const fp = traceFingerprint(run);
        if (kept[f].some((k) => k.fp === fp) || tentativeFps[f].includes(fp)) return bump(callRejections, 'duplicate_trace');
        if (kept[f].length + tentativeFps[f].length >= opts.perFunction) return bump(callRejections, 'enough_for_function');
        tentative.push({ i, fp });
        tentativeFps[f].push(fp);
      });
      // The determinism check (a second run with the heap perturbed) only for the calls that
      // would be kept: most calls fail the checks above, and their second run was most of the
      // time. (A call found nondeterministic here still took its function's slot: 3-7 per run.)
      const same = await sameTraceAgain(tentative.map((t) => records[t.i]), tentative.map((t) => t.fp), opts.checkTracer ?? opts.tracer);
      tentative.forEach(({ i, fp }, k) => {
        const { f, redrawn } = pending[i];
        if (!same[k]) return bump(callRejections, 'nondeterministic');
        // Ids number a function's kept calls in the order they were found.
        kept[f].push({ rec: { ...records[i], id: `${batch[f].module}.${batch[f].function}#${kept[f].length}` }, fp });
        if (redrawn) out.keptFromRedraws++;
      });
      // Functions still short of calls re-draw the blamed arguments of their failed calls, and
      // run their second wave (after the re-draws: a re-draw's own failure, next round, is the
      // one whose fix finds the input; see the round budgets).
      pending = [];
      if (round >= 2) break;
      // The first re-draw round spends at most half the budget: its fixes often fail on the
      // next thing (a dict of the wrong keys), which the second round fixes.
      const roundLeft = redrawLeft.map((left) => (round === 0 ? Math.min(left, Math.ceil(redraws / 2)) : left));
      for (const { f, args, error } of failed) {
        if (kept[f].length >= opts.perFunction || roundLeft[f] <= 0) continue;
        for (const call of redrawCalls(batch[f], { args, error }, rngs[f], tried[f], roundLeft[f])) {
          redrawLeft[f]--;
          roundLeft[f]--;
          pending.push({ f, call, redrawn: true });
        }
      }
      if (round === 0) batch.forEach((_, j) => kept[j].length < opts.perFunction && secondWave[j].forEach((call) => pending.push({ f: j, call, redrawn: false })));
    }
    return kept;
  };
  // Batches run side by side and add to these counts in whatever order their calls finish; the
  // keys are set here in a fixed order so that the manifest's bytes do not depend on it.
  for (const i of live) out.callsPerPackage[functions[i].origin.package] ??= 0;
  const chunk = opts.batchSize ?? 64;
  const batches: Extracted[][] = [];
  for (let c = 0; c < live.length; c += chunk) batches.push(live.slice(c, c + chunk).map((i) => functions[i]));
  // Batches in flight at once: one batch's rounds end on a tail of a few slow calls and on the
  // Python steps between tracer calls, which left the sandbox workers idle a quarter of the time.
  const inFlight: Array<Promise<Kept>> = [];
  const launch = (b: number) => {
    if (b >= batches.length) return;
    const p = mineBatch(batches[b]);
    // Awaited in order below; a later batch's failure must not go unhandled meanwhile.
    p.catch(() => undefined);
    inFlight.push(p);
  };
  for (let b = 0; b < BATCHES_IN_FLIGHT; b++) launch(b);
  for (let b = 0, done = 0; b < batches.length; b++) {
    const batch = batches[b];
    const kept = await inFlight.shift()!;
    launch(b + BATCHES_IN_FLIGHT);
    done += batch.length;
    batch.forEach((f, j) => {
      if (kept[j].length < opts.minPerFunction) return bump(functionRejections, kept[j].length === 0 ? 'no_call_kept' : 'too_few_distinct_calls');
      out.functionsKept++;
      bump(out.perPackage, f.origin.package);
      const fromCorpus = new Set([...f.doctests, ...f.callsites]);
      for (const { rec } of kept[j]) {
        if (fromCorpus.has(rec.input)) out.callsFromCorpus++;
        out.recordsKept++;
        write({ ...rec, source: { ...f.origin, file: relOf.get(f.path) ?? f.path, module: f.module, function: f.function, line: f.line } });
      }
    });
    opts.onProgress?.(done, live.length, out.functionsKept);
  }
  return { ...out, callRejections: Object.fromEntries(Object.entries(callRejections).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
}

import { assetPath } from '../util/paths';
import { runPythonScript } from '../util/python_script';
import { Rng } from '../util/rng';
import type { FilterConfig } from './config';
import { filterRecords } from './filters';
import type { CorpusFile, Provenance } from './mine_corpus';
import { candidateInputs, type FunctionHints } from './mine_inputs';
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
  'abc', 'array', 'base64', 'binascii', 'bisect', 'calendar', 'cmath', 'codecs', 'collections', 'colorsys', 'contextlib',
  'copy', 'copyreg', 'csv', 'dataclasses', 'datetime', 'decimal', 'difflib', 'enum', 'fnmatch', 'fractions', 'functools',
  'heapq', 'html', 'io', 'ipaddress', 'itertools', 'json', 'keyword', 'math', 'numbers', 'operator', 'posixpath', 'pprint',
  're', 'reprlib', 'shlex', 'statistics', 'string', 'stringprep', 'struct', 'textwrap', 'types', 'typing', 'unicodedata',
  'warnings', 'zlib',
];

/** Exceptions that mean the input was of the wrong type, not that the code raised on purpose. */
const WRONG_INPUT = /^(TypeError|AttributeError|NameError|ImportError|ModuleNotFoundError|RecursionError|NotImplementedError|UnboundLocalError)\b/;

export interface MineOptions {
  files: CorpusFile[];
  tracer: Tracer;
  seed: number;
  /** Calls proposed per function. */
  candidates: number;
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
  python?: string;
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
  callRejections: Record<string, number>;
  functionRejections: Record<string, number>;
  functionsKept: number;
  recordsKept: number;
  /** Kept functions per package. */
  perPackage: Record<string, number>;
  callsFromCorpus: number;
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

async function runExtractor(python: string, request: unknown): Promise<{ functions: Extracted[]; summary: { modules: number; functions: number; counts: Record<string, number> } }> {
  const stdout = await runPythonScript(python, assetPath('src/programs/mine_extract.py'), JSON.stringify(request));
  const lines = stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const summary = lines.pop();
  return { functions: lines as Extracted[], summary };
}

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
  const { functions, summary } = await runExtractor(python, {
    files: mined.map((f) => ({ path: f.path, module: f.module, origin: f.origin })),
    callsite_files: opts.files.filter((f) => f.test).map((f) => ({ path: f.path, module: f.module, origin: f.origin })),
    allow_imports: MINE_ALLOW_IMPORTS,
    max_function_lines: opts.maxFunctionLines,
    max_code_lines: opts.maxCodeLines,
  });
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
      live.push(i);
    }
  });
  const filter: FilterConfig = {
    maxEvents: opts.maxEvents,
    minChars: 20,
    maxChars: 20000,
    maxLines: opts.maxCodeLines + 20,
    allowImports: MINE_ALLOW_IMPORTS,
    checkDeterminism: true,
    rejectUnplannedErrors: false,
  };
  const out: MineSummary = {
    files: opts.files.length,
    modules: summary.modules,
    functionsSeen: summary.functions,
    extraction,
    functionsExtracted: functions.length,
    callsTried: 0,
    callRejections,
    functionRejections,
    functionsKept: 0,
    recordsKept: 0,
    perPackage: {},
    callsFromCorpus: 0,
  };
  const chunk = 64;
  for (let c = 0; c < live.length; c += chunk) {
    const batch = live.slice(c, c + chunk).map((i) => functions[i]);
    const records: ProgramRecord[] = [];
    const owner: number[] = [];
    batch.forEach((f, j) => {
      // One stream per function: its calls do not depend on which other functions were mined.
      const rng = Rng.from(opts.seed, 'mine', f.module, f.function);
      candidateInputs(f, opts.candidates, rng).forEach((input, k) => {
        records.push({ id: `${f.module}.${f.function}#${k}`, code: f.code, input, entry: f.function });
        owner.push(j);
      });
    });
    out.callsTried += records.length;
    const facts = await codeFacts(records.map((r) => r.code));
    const outcomes = await filterRecords(records, facts, opts.tracer, filter);
    // The filters keep no runs; trace the survivors once more to read their events.
    const okIdx = outcomes.map((o, i) => (o.ok ? i : -1)).filter((i) => i >= 0);
    const runs = await opts.tracer(okIdx.map((i) => records[i]));
    const kept: Array<Array<{ rec: ProgramRecord; fp: string }>> = batch.map(() => []);
    outcomes.forEach((o, i) => {
      if (!o.ok) bump(callRejections, o.reason ?? 'unknown');
    });
    okIdx.forEach((i, j) => {
      const run = runs[j];
      const f = owner[i];
      if (run.status === 'error' && WRONG_INPUT.test(run.error ?? '')) return bump(callRejections, 'wrong_input_type');
      if (ownLines(run) < opts.minLines) return bump(callRejections, 'too_few_lines');
      const fp = traceFingerprint(run);
      if (kept[f].some((k) => k.fp === fp)) return bump(callRejections, 'duplicate_trace');
      if (kept[f].length >= opts.perFunction) return bump(callRejections, 'enough_for_function');
      kept[f].push({ rec: records[i], fp });
    });
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
    opts.onProgress?.(Math.min(c + chunk, live.length), live.length, out.functionsKept);
  }
  return out;
}

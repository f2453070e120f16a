/**
 * Real code in every result: the quickstart's and the learning bench's CruxEval section. On a
 * fixed sample of CruxEval programs (the first N of the file; none is ever trained on — the
 * training data is generated programs and standard-library code) it runs
 *  - next-state accuracy, every action, the model beside the rule and naive baselines, with
 *    intervals and per-task samples (`next_state_cruxeval.json`, `..._samples.jsonl`);
 *  - the paper's CruxEval protocol (runCruxEval: output via step_return and breakpoint, input
 *    via inv_step_call, pass@1 of the unsampled answer), beside the paper's 1.8B figures and the trivial rule
 *    "the output equals the input" scored in the same sandbox (`cruxeval.json`).
 * The quickstart passes the copy that ships in evalsets/; without a file the section says it skipped.
 */
import * as fs from 'fs';
import * as path from 'path';
import { checkAssertion, SandboxPool, tracePrograms } from '../trace';
import type { ProgramRecord } from '../trace/types';
import type { TextCompleter } from './completer';
import { runCruxEval, type CruxEvalSummary } from './cruxeval_run';
import { loadPrograms, writeJson } from './load';
import { formatTables, type NextStateResult } from './next_state';
import { nextStateSection } from './next_state_section';

/** pass@1 of the paper's 1.8B neural debugger on CruxEval (arXiv 2603.09951), in percent. */
export const PAPER_CRUXEVAL_1_8B: Record<string, number> = { output_step_return: 48.0, output_breakpoint: 57.7, input_inv_step_call: 53.6 };

export interface CruxEvalSuiteOptions {
  /** CruxEval JSONL; undefined: the section is skipped. */
  file?: string;
  /** Programs of the fixed sample (the first N). */
  programs: number;
  seed: number;
  workers: number;
}

export interface CruxEvalSuite {
  file: string;
  programs: number;
  nextState: NextStateResult['tables'];
  protocol: CruxEvalSummary;
  /** How the pass@1 answers were decoded (`4-beam search`, `greedy`). */
  decoding: string;
  /** pass rate of "the output equals the input" (assert f(INPUT) == INPUT) and of "the input equals the output" (assert f(OUTPUT) == OUTPUT). */
  trivial: { output: number; input: number };
}

/** The trivial CruxEval rule, scored with the same sandboxed assertions as the model. */
async function trivialRule(programs: ProgramRecord[], workers: number): Promise<CruxEvalSuite['trivial']> {
  const pool = new SandboxPool(workers, {});
  try {
    let output = 0;
    let input = 0;
    for (const p of programs) {
      const f = p.entry ?? 'f';
      if ((await checkAssertion(p.code, `assert ${f}(${p.input}) == (${p.input})`, { pool })).passed) output++;
      if (p.output !== undefined && (await checkAssertion(p.code, `assert ${f}(${p.output}) == (${p.output})`, { pool })).passed) input++;
    }
    return { output: output / Math.max(programs.length, 1), input: input / Math.max(programs.length, 1) };
  } finally {
    await pool.close();
  }
}

/** Runs the section into evalDir; undefined (and a line saying so) when no file is given. */
export async function runCruxEvalSuite(completer: TextCompleter, evalDir: string, o: CruxEvalSuiteOptions, log: (line: string) => void): Promise<CruxEvalSuite | undefined> {
  if (!o.file) {
    log('CruxEval: skipped: no CruxEval file (pass --cruxeval FILE, CruxEval JSONL, to add real code)');
    return undefined;
  }
  if (!fs.existsSync(o.file)) {
    log(`CruxEval: skipped: ${o.file} does not exist`);
    return undefined;
  }
  const programs = await loadPrograms(o.file, o.programs);
  const traces = await tracePrograms(programs, o.workers, true);
  const { result } = await nextStateSection(traces, completer, {
    seed: o.seed,
    evalDir,
    suffix: '_cruxeval',
    meta: { title: `Next-state accuracy (exact match, the first ${programs.length} CruxEval programs)`, level: 'cruxeval' },
  });
  log(`CruxEval next-state (the first ${programs.length} programs of ${o.file}; never trained on):\n${formatTables(result.tables)}`);
  const protocol = await runCruxEval(programs, completer, {
    samples: 0, ks: [], temperature: 0, topP: 1, seed: o.seed, workers: o.workers, quiet: true, resultsFile: path.join(evalDir, 'cruxeval_samples.jsonl'),
  });
  const trivial = await trivialRule(programs, o.workers);
  const decoding = completer.decoding ?? 'greedy';
  const suite: CruxEvalSuite = { file: o.file, programs: programs.length, nextState: result.tables, protocol, decoding, trivial };
  writeJson(path.join(evalDir, 'cruxeval.json'), { title: `CruxEval (pass@1, ${decoding})`, decoding, ...protocol, paper_1_8b: PAPER_CRUXEVAL_1_8B, trivial });
  log(formatCruxEvalProtocol(suite));
  return suite;
}

/** `CruxEval pass@1 (200 programs): output_step_return 1.5% (paper 1.8B: 48.0) ... trivial ...`. */
export function formatCruxEvalProtocol(s: CruxEvalSuite): string {
  const rows = Object.entries(s.protocol.byTask).map(([k, v]) => `${k} ${(100 * v.greedyPass1).toFixed(1)}% of ${v.tasks} (paper 1.8B: ${PAPER_CRUXEVAL_1_8B[k]?.toFixed(1) ?? '-'})`);
  const trivial = `trivial "output = input" ${(100 * s.trivial.output).toFixed(1)}%, "input = output" ${(100 * s.trivial.input).toFixed(1)}%`;
  return `CruxEval protocol, pass@1 ${s.decoding} (${s.programs} programs): ${rows.join('; ')}; ${trivial}`;
}

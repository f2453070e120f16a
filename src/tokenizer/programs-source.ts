/**
 * NDL text straight from a programs JSONL: each program is traced in-process and written as
 * its forward document under all `step_into` with src/ndl's formatter. This gives the tokenizer
 * real NDL documents (delta-encoded locals, reprs, SRC lines, every frame token) before the
 * full program -> trace -> sampler pipeline has produced any; once `ndbg ndl` output exists,
 * train on it with a `{"kind": "ndl"}` source instead.
 *
 * The tracer runs the programs unsandboxed (src/trace/inprocess.ts): use trusted programs only.
 */
import { formatDocument } from '../ndl/format';
import { allStepTrajectory, treeFor } from '../ndl/generate';
import { traceInProcess } from '../trace/inprocess';
import type { ProgramRecord, TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { readJsonlSync } from '../util/jsonl';

/** The forward all-step_into document of a trace, or undefined if nothing was traced. */
export function allStepIntoDocument(trace: TraceRecord): string | undefined {
  const tree = treeFor(trace, 'forward');
  return tree && formatDocument(trace, tree, allStepTrajectory(tree, 'step_into'));
}

export function readPrograms(file: string): ProgramRecord[] {
  let records: ProgramRecord[];
  try {
    records = readJsonlSync<ProgramRecord>(file);
  } catch (e) {
    throw new UserError(`cannot read programs ${file}: ${(e as Error).message}`);
  }
  records.forEach((p, i) => {
    if (typeof p?.id !== 'string' || typeof p.code !== 'string' || typeof p.input !== 'string') {
      throw new UserError(`${file}: record ${i + 1} needs string fields id, code and input`);
    }
  });
  return records;
}

/** Traces `programs` in batches and returns [program id, document] pairs in input order. */
export function programDocuments(programs: ProgramRecord[], batch = 64): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < programs.length; i += batch) {
    for (const trace of traceInProcess(programs.slice(i, i + batch))) {
      const doc = allStepIntoDocument(trace);
      if (doc !== undefined) out.push([trace.id, doc]);
    }
  }
  return out;
}

/**
 * NDL text straight from a programs JSONL: each program is traced in-process and written as
 * its forward document under all `step_into` with src/ndl's formatter. This gives the tokenizer
 * real NDL documents (delta-encoded locals, reprs, SRC lines, every frame token) before the
 * full program -> trace -> sampler pipeline has produced any; once `ndbg ndl` output exists,
 * train on it with a `{"kind": "ndl"}` source instead.
 *
 * The tracer runs the programs unsandboxed (src/trace/inprocess.ts): use trusted programs only.
 */
import type { StateNode, StateTree } from '../debugger/types';
import { formatDocument } from '../ndl/format';
import { traceInProcess } from '../trace/inprocess';
import type { ProgramRecord, TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { readJsonlSync } from '../util/jsonl';

/** The forward state tree of a trace: one node per recorded event, in order (spec §4). */
export function forwardTreeOf(trace: TraceRecord): StateTree {
  const nodes: StateNode[] = trace.events.map((e, index) => ({
    index,
    event: e.event,
    depth: e.depth,
    invocation: e.invocation,
    line: e.line,
    src: e.src,
    locals: e.locals,
    value: e.value,
    traceIndex: index,
  }));
  const exitKind = trace.status === 'normal' ? 'exit_normal' : trace.status === 'error' ? 'exit_error' : 'exit_never';
  return { direction: 'forward', nodes, exitKind: exitKind.replace('exit_', '') as StateTree['exitKind'] };
}

/** The forward all-step_into document of a trace, or undefined if nothing was traced. */
export function allStepIntoDocument(trace: TraceRecord): string | undefined {
  const tree = forwardTreeOf(trace);
  if (tree.nodes.length === 0) return undefined;
  const steps = tree.nodes.map((_, node) => ({ node, action: { kind: 'step_into' as const } }));
  return formatDocument(trace, tree, { direction: 'forward', steps, end: 'exit' });
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

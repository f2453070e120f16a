/**
 * The program stage's records, and what it needs from a tracer. The stage filters candidates by
 * running them, but it comes before the trace stage: it names the tracer it needs (`Tracer`) and
 * the part of a run it reads (`ProgramRun`), and src/trace implements them (src/trace/tracers.ts;
 * its TraceRecord has every field of ProgramRun).
 */

/** A program to trace (CruxEval style); one line of programs.jsonl. */
export interface ProgramRecord {
  id: string;
  code: string;
  input: string;
  /** Entry function name, default `f`. */
  entry?: string;
  output?: string;
}

/** The fields of a trace record (docs/trace.md) that the filters and summaries read. */
export interface ProgramRun {
  status: 'normal' | 'error' | 'never';
  error?: string;
  limit?: string;
  events: ReadonlyArray<{
    event: 'call' | 'line' | 'return' | 'exception';
    depth: number;
    invocation: number;
    line: number;
    func: string;
    locals: Record<string, string>;
    value: string | null;
    calls?: number[];
  }>;
}

/**
 * How the program stage runs programs: any function from program records to their runs in the
 * same order. The filters take one as a parameter, so tests can use the raw in-process tracer
 * and `ndbg programs generate` the sandbox (generated code is untrusted-ish: a generator bug
 * could loop inside a builtin, where only the sandbox's timeout helps).
 */
export type Tracer = (programs: ProgramRecord[]) => Promise<ProgramRun[]>;

export interface ClosableTracer {
  trace: Tracer;
  close(): Promise<void>;
  /** For reports: "sandbox (bwrap, 2 workers)", "raw in-process". */
  describe: string;
}

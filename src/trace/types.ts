/**
 * The trace record: one JSONL line per program run, written by `ndbg trace` and read by the
 * debugger, NDL and evaluation stages. Field names are part of the on-disk format.
 */
export type TraceEventKind = 'call' | 'line' | 'return' | 'exception';
export type RunStatus = 'normal' | 'error' | 'never';

export interface TraceEvent {
  event: TraceEventKind;
  /** Call depth; the harness's `main` is 0, the entry function 1. */
  depth: number;
  /** Invocation id: distinct per function call, shared by all events of that call. */
  invocation: number;
  line: number;
  /** Exact source line text (indentation kept, no newline). For calls, the `def` line. */
  src: string;
  /** repr strings of the frame's locals in f_locals order (insertion order of this object). */
  locals: Record<string, string>;
  /** repr of the return value / exception; null for a return caused by an exception. */
  value: string | null;
  /** Function name (code object name), for display and the inverse tree's entry lookup. */
  func: string;
  /**
   * For line events: the invocation ids of traced calls made while this line ran (used by the
   * inverse tree's inv_line_call copies). Absent or empty when the line made no traced call.
   */
  calls?: number[];
  /** Generators/coroutines (docs/trace.md): set on the `call` event of a frame resumed after a
   * yield/await (settrace reports every resume as a call, with a new invocation id). */
  resumed?: boolean;
  /** Set on a generator's `return` event that is a yield (value = the yielded value's repr). */
  yield?: boolean;
  /** Repository-level traces only: the file of the frame, relative to the repository root
   * (on call events of a repository trace; on every event of a scoped one). */
  file?: string;
}

export interface TraceRecord {
  id: string;
  code: string;
  /** e.g. `f(5)`: the entry function name followed by the input text in parentheses. */
  entry_call: string;
  /** Python version that produced the trace, e.g. "3.11.7". */
  python: string;
  status: RunStatus;
  /** Message of the uncaught exception or the limit hit; absent when status is normal. */
  error?: string;
  /** Why a run ended abnormally when it was not (only) the program's own exception (see RunLimit). */
  limit?: RunLimit;
  events: TraceEvent[];
  /** Captured (capped) stdout/stderr of the program; absent when empty. stdout also holds what
   * the program wrote to file descriptors 1 and 2 directly. */
  stdout?: string;
  stderr?: string;
  /** Characters beyond the output cap that were dropped. */
  stdout_truncated?: number;
  stderr_truncated?: number;
  /**
   * `repository`: a trajectory source scoped to one invocation of a repository trace
   * (src/ndl/repo_scope.ts): `code` is the multi-file SRC (docs/ndl.md, "Repository documents"),
   * both directions' CONTEXT is `code` alone (no `main`), the entry invocation is depth 1 and
   * EXIT is leaving it. Absent on function-level traces.
   */
  level?: 'repository';
  scope?: RepoScope;
  /** Sandbox isolation the run had: `bwrap` (OS namespaces + guards) or `guards` (rlimits + audit hooks). */
  isolation?: 'bwrap' | 'guards';
  /** Operations the sandbox refused (audit event names, e.g. `os.fork`), when any. */
  blocked?: string[];
}

/** Where a repository-level trajectory comes from, and what pdb needs to replay it. */
export interface RepoScope {
  repo_id: string;
  /** Repository root (absolute) and the sys.path entries its run had first. */
  repo: string;
  path: string[];
  /** The repository trace's entry point (e.g. `unittest:tests.test_x.T.test_y`). */
  entry: string;
  /** Id of the repository trace record. */
  trace_id: string;
  /** The chosen invocation's id and depth in the repository trace. */
  invocation: number;
  depth: number;
  func: string;
  file: string;
  /** The def blocks written into the SRC: [file, first line, last line], in SRC order. */
  blocks: Array<[string, number, number]>;
  /** Functions called in the scope whose block did not fit the context budget. */
  omitted: number;
  /** The breakpoint targets a user could name (the statement lines of the SRC's blocks). */
  statement_lines: Array<{ file: string; line: number; src: string }>;
  repr_cap: number;
}

/**
 * steps: event cap reached (never) · timeout: wall clock (never) · cpu: CPU rlimit (never) ·
 * memory: MemoryError (error) · exit: os._exit or a silent process exit (error) ·
 * sandbox: a refused operation ended the run (error) · traceoff: tracing was switched off
 * mid-run, the trace is incomplete (error) · crash: killed by a signal, or the worker
 * failed (error) · output: the result itself was too large (error).
 */
export type RunLimit = 'steps' | 'timeout' | 'cpu' | 'memory' | 'exit' | 'sandbox' | 'traceoff' | 'crash' | 'output';

/** What the trace stage reads: the program stage's record (src/programs/types.ts). */
export type { ProgramRecord } from '../programs/types';

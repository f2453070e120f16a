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
  /** Sandbox isolation the run had: `bwrap` (OS namespaces + guards) or `guards` (rlimits + audit hooks). */
  isolation?: 'bwrap' | 'guards';
  /** Operations the sandbox refused (audit event names, e.g. `os.fork`), when any. */
  blocked?: string[];
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

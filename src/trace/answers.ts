/**
 * What a sandbox request is and what the worker's answer to it means: the request kinds, the
 * result record, and the result made up for a request the worker could not answer itself.
 */
import { spawnSync } from 'child_process';
import type { IsolationMode } from './isolation';

export type SandboxRequest =
  | { id: string; kind: 'trace'; code: string; entry_call: string; timeout_s?: number; max_events?: number }
  | { id: string; kind: 'exec'; code: string; timeout_s?: number }
  /** One repository entry point (src/trace/repo_tracer.py): `spec` is the repository as JSON. */
  | { id: string; kind: 'repo'; spec: string; entry: string; timeout_s?: number; max_events?: number }
  | { id: string; kind: 'stats' };

/** The raw result line of the worker, parsed. */
export type SandboxResult = Record<string, unknown> & { id: string | null; status: string };

/**
 * One request's answer: the lines its child wrote and the worker's trailer. An empty trailer
 * means the child exited normally after writing its result, which must then be the one line
 * that is a JSON record of this request (a program that writes to the result pipe itself cannot
 * pass for another request). Otherwise the trailer holds the status, limit and message.
 */
export function parseAnswer(lines: string[], trailerJson: string, req: SandboxRequest, mode: IsolationMode): SandboxResult {
  let trailer: { status?: string; limit?: string; error?: string };
  try {
    trailer = JSON.parse(trailerJson) as typeof trailer;
  } catch {
    return failure(req, 'error', 'crash', 'invalid trailer line from the sandbox worker', mode);
  }
  if (trailer.status) return failure(req, trailer.status, trailer.limit ?? 'crash', trailer.error ?? 'unknown failure', mode);
  const records: SandboxResult[] = [];
  for (const line of lines) {
    try {
      const r = JSON.parse(line) as SandboxResult;
      if (r && typeof r === 'object' && typeof r.status === 'string' && (req.kind === 'stats' || r.id === req.id)) records.push(r);
    } catch {
      // not a record: output the program wrote to the result pipe
    }
  }
  if (records.length === 1 && lines.length === 1) return records[0];
  const why = lines.length === 0 ? 'the program exited without a result' : 'the program wrote to the sandbox result pipe';
  return failure(req, 'error', lines.length === 0 ? 'exit' : 'sandbox', why, mode);
}

export function failure(req: SandboxRequest, status: string, limit: string, message: string, mode: IsolationMode): SandboxResult {
  const r: Record<string, unknown> = { id: req.id };
  if (req.kind === 'trace') Object.assign(r, { code: req.code, entry_call: req.entry_call, python: pythonVersion() });
  Object.assign(r, { status, error: message, limit, isolation: mode });
  if (req.kind === 'repo') Object.assign(r, { kind: 'repo', entry: req.entry, python: pythonVersion(), files: {} });
  if (req.kind === 'trace' || req.kind === 'repo') r.events = [];
  return r as SandboxResult;
}

let cachedPython: string | undefined;

/** "3.11.7": the version the workers run (for results the worker could not write itself). */
export function pythonVersion(python = 'python3'): string {
  if (cachedPython === undefined) {
    const res = spawnSync(python, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], { encoding: 'utf8' });
    cachedPython = res.status === 0 ? res.stdout.trim() : 'unknown';
  }
  return cachedPython;
}

/**
 * Runs real pdb on programs through pdb_harness.py: each job is one program with many command
 * scripts; one Python process serves many jobs (it forks a child per script), and jobs can be
 * spread over several such processes.
 */
import { spawn } from 'child_process';
import { repoFilePath } from '../trace/repo';
import { assetPath } from '../util/paths';
import { breakpointLocation } from './actions';
import { Action, StateTree } from './types';

export interface PdbStop {
  event: 'call' | 'line' | 'return' | 'exception';
  /** The frame's current line (for a resumed generator's call: the line of its yield). */
  line: number;
  /** The function's `def` line (the line of every call node in the trace). */
  firstline: number;
  depth: number;
  locals: Record<string, string>;
  /** repr of the return value (None for a return caused by an exception) or of the exception. */
  value: string | null;
  /** Whether the frame is a generator's (bdb special-cases those). */
  gen: boolean;
  /** Whether generator frames decided this stop (pdb_harness.py `_generator_rule`). */
  gen_rule: GeneratorRule;
  /** Index of the event in the trace (counting mode only). */
  ordinal: number | null;
}

export interface PdbExit {
  event: 'exit';
  kind: 'normal' | 'error' | 'never';
  /** As on a stop ("stopframe" or "send_end"): whether bdb's generator cases made pdb run to this exit. */
  gen_rule?: GeneratorRule;
}

/**
 * "stopframe": bdb's stop frame was a generator/coroutine frame (after `next` or `return` in
 * one, or `return` at the return of a frame called from one); "send_end": since the previous
 * stop bdb passed over the StopIteration that ends a `yield from`/`await` (it never stops
 * there); "close": the stop is inside a generator's close (GeneratorExit thrown into it, until
 * it returns; also in what the close calls); null: none of these.
 */
export type GeneratorRule = 'stopframe' | 'send_end' | 'close' | null;

export interface PdbRun {
  /** The first stop (main's call), one per resuming command, and an exit if pdb lost control. */
  stops: Array<PdbStop | PdbExit>;
  /** Messages pdb printed with `***` (e.g. a refused tbreak). */
  errors: string[];
  /** Why the run gave no result: "timeout", "child died ...", "module: NameError", or null. */
  failure: string | null;
}

export interface PdbJob {
  id: string;
  code: string;
  entry_call: string;
  /** The trace's event count when it was cut off (status never): pdb past it is EXIT never. */
  limit: number | null;
  /** Counting mode: every stop also carries its event's index in the trace. */
  count: boolean;
  /** Seconds per script before the child is killed. */
  timeout: number;
  /** pdb command lines per script, e.g. ["step", "tbreak 7", "continue"]. */
  scripts: string[][];
}

export interface PdbResult {
  id: string;
  /** The Python version pdb ran under. */
  python: string;
  runs: PdbRun[];
}

/**
 * A repository-level job (src/debugger/repo_pdb_harness.py): pdb is driven into invocation
 * `invocation` of the run of `entry` in the repository at `root`.
 */
export interface RepoPdbJob {
  id: string;
  root: string;
  path: string[];
  entry: string;
  invocation: number;
  repr_cap: number;
  seed: number;
  timeout: number;
  scripts: string[][];
}

/**
 * The pdb commands for one action from node `i`: step, next, return, continue, or
 * `tbreak N` + continue where N is the line chosen by breakpointLocation (`tbreak FILE:N` in a
 * repository-level tree, FILE under `root`). Undefined when a breakpoint's text is no line of
 * the program (pdb has no way to express it).
 */
export function pdbCommands(tree: StateTree, i: number, action: Action, root?: string): string[] | undefined {
  switch (action.kind) {
    case 'step_into':
      return ['step'];
    case 'step_over':
      return ['next'];
    case 'step_return':
      return ['return'];
    case 'continue':
      return ['continue'];
    case 'breakpoint': {
      const at = breakpointLocation(tree, i, action.target ?? '');
      if (at === undefined) return undefined;
      const file = at.file !== undefined ? `${repoFilePath(root ?? '', at.file)}:` : '';
      return [`tbreak ${file}${at.line}`, 'continue'];
    }
    default:
      throw new Error(`pdbCommands: ${action.kind} has no pdb equivalent`);
  }
}

const HARNESS = 'src/debugger/pdb_harness.py';
const REPO_HARNESS = 'src/debugger/repo_pdb_harness.py';

/** Runs the jobs in one harness process; results come back in job order. */
function runOneProcess(harness: string, jobs: Array<PdbJob | RepoPdbJob>, onResult?: (r: PdbResult) => void): Promise<PdbResult[]> {
  return new Promise((resolve, reject) => {
    if (jobs.length === 0) return resolve([]);
    const child = spawn('python3', [assetPath(harness)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONHASHSEED: '0' },
    });
    const results: PdbResult[] = [];
    let buffer = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (line.trim() === '') continue;
        const r = JSON.parse(line) as PdbResult;
        results.push(r);
        onResult?.(r);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0 || results.length !== jobs.length) {
        reject(new Error(`pdb harness exited with code ${code} after ${results.length}/${jobs.length} jobs: ${stderr.slice(-2000)}`));
      } else resolve(results);
    });
    child.stdin.on('error', () => undefined); // a crash is reported by 'close'
    child.stdin.end(jobs.map((j) => JSON.stringify(j)).join('\n') + '\n');
  });
}

export interface HarnessOptions {
  workers?: number;
  onResult?: (r: PdbResult) => void;
}

/** Runs the jobs over `workers` harness processes (round-robin); results in job order. */
export function runPdbHarness(jobs: PdbJob[], options: HarnessOptions = {}): Promise<PdbResult[]> {
  return runSharded(HARNESS, jobs, options);
}

/** runPdbHarness for repository-level jobs (repo_pdb_harness.py). */
export function runRepoPdbHarness(jobs: RepoPdbJob[], options: HarnessOptions = {}): Promise<PdbResult[]> {
  return runSharded(REPO_HARNESS, jobs, options);
}

async function runSharded<J extends PdbJob | RepoPdbJob>(harness: string, jobs: J[], options: HarnessOptions): Promise<PdbResult[]> {
  const workers = Math.max(1, Math.min(options.workers ?? 1, jobs.length));
  const shards: J[][] = Array.from({ length: workers }, () => []);
  jobs.forEach((j, k) => shards[k % workers].push(j));
  const parts = await Promise.all(shards.map((s) => runOneProcess(harness, s, options.onResult)));
  return jobs.map((_, k) => parts[k % workers][Math.floor(k / workers)]);
}

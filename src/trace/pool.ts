// Over 300 lines on purpose: the Worker (one Python process: its pipe, answers and restart) and the
// SandboxPool (queue, pipelining, watchdog) share one request framing and each other's state.
import { ChildProcessWithoutNullStreams, spawn } from 'child_process';
import * as fs from 'fs';
import { failure, parseAnswer, type SandboxRequest, type SandboxResult } from './answers';
import { IsolationChoice, IsolationMode, resolveIsolation, workerCommand } from './isolation';

export { failure, pythonVersion, type SandboxRequest, type SandboxResult } from './answers';

/**
 * A pool of sandbox workers (src/trace/sandbox.py), each a long-lived Python process that forks
 * one child per program. Requests are pipelined (a few in flight per worker, answered in
 * order); a worker that dies or stops answering is replaced and its current request gets an
 * `error`/`crash` result, so a batch always completes.
 */
export interface SandboxOptions {
  /** Wall-clock limit per program in seconds (default 5). The tracer stops itself at this
   * deadline with a partial record; the worker SIGKILLs the child `killGraceS` later. */
  timeoutS?: number;
  killGraceS?: number;
  /** Event cap per trace (default 10000): the run ends with status `never`, limit `steps`. */
  maxEvents?: number;
  /** repr cap in characters (spec ndl.md §3; default 256). */
  reprCap?: number;
  /** Address-space rlimit per program in MiB (default 1024; 0 = none). */
  memoryMb?: number;
  /** File-size rlimit per program in MiB (default 16). */
  fsizeMb?: number;
  /** Characters of stdout/stderr kept per program (default 65536); the rest is counted. */
  outputCap?: number;
  /** Seed of Python's `random` at the start of every program (default 0). */
  seed?: number;
  /** Isolation: auto (bwrap when it works), bwrap, guards. Default: NDBG_SANDBOX or auto. */
  isolation?: IsolationChoice;
  /** Programs that purity.shareable admits run one after another in a shared child, up to this
   * many per child (default 1000); the others, and all of them when 0, in a fresh fork each
   * (docs/trace.md, "Shared process"). */
  sessionPrograms?: number;
  /** CPU-time limit of a shared child in whole seconds (default 60); a session ends before a
   * program when less than that program's time limit + 1 s would be left of it. */
  sessionCpuS?: number;
  python?: string;
  /** Modules the worker imports before it forks any program (e.g. the standard-library modules
   * mined code imports), so that no program pays for importing them. None that imports
   * `random`: the worker refuses to start (programs seed it on import). */
  preimport?: string[];
  /** Loosens what the shared child takes to purity.first_look, admitting imports of these
   * modules (of `preimport`), class definitions and attribute stores. Its traces are then a
   * first look only: keep a result only when a fresh fork (a pool without this) gives the same
   * trace, as the miner does. */
  firstLookModules?: string[];
  /** Host paths the programs read (a repository being traced): bubblewrap mounts a fresh /tmp,
   * so those under /tmp are bound into it read-only. */
  readOnlyPaths?: string[];
}

interface Pending {
  req: SandboxRequest;
  /** Header and payload as the worker reads them (src/trace/protocol.py). */
  frame: Buffer;
  sentAt: number;
  resolve: (r: SandboxResult) => void;
}

/** Starts the worker's closing line after a request's output: `\n\x1e{...}\n`. */
const TRAILER_MARK = '\x1e';

/** Requests sent ahead to a worker so it never waits for the parent between programs. */
const PIPELINE_DEPTH = 4;

class Worker {
  proc!: ChildProcessWithoutNullStreams;
  pending: Pending[] = [];
  private buf = '';
  /** Lines the running request's child wrote before the worker's trailer. */
  private lines: string[] = [];
  private lastAnswer = Date.now();
  private cleanup?: string;
  dead = false;

  constructor(private readonly pool: SandboxPool) {
    this.start();
  }

  private start(): void {
    const cmd = workerCommand(this.pool.mode, this.pool.python, this.pool.workerConfig, this.pool.options.readOnlyPaths);
    this.cleanup = cmd.cleanup;
    this.dead = false;
    this.buf = '';
    this.lines = [];
    this.lastAnswer = Date.now();
    const proc = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.proc = proc;
    this.setRef(false);
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => this.onData(chunk));
    let stderr = '';
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (c: string) => {
      if (stderr.length < 4000) stderr += c;
    });
    proc.stdin.on('error', () => undefined); // EPIPE when the worker died; handled on exit
    proc.on('exit', (code, signal) => {
      if (this.proc !== proc) return;
      this.dead = true;
      this.removeDir();
      if (this.pool.closed) return;
      const why = `sandbox worker exited (${signal ?? `code ${code}`})${stderr ? `: ${stderr.trim().split('\n').pop()}` : ''}`;
      this.restart(why);
    });
  }

  private removeDir(): void {
    if (this.cleanup) {
      fs.rmSync(this.cleanup, { recursive: true, force: true });
      this.cleanup = undefined;
    }
  }

  private onData(chunk: string): void {
    this.buf += chunk;
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (!line.startsWith(TRAILER_MARK)) {
        if (line) this.lines.push(line);
        continue;
      }
      const lines = this.lines;
      this.lines = [];
      const head = this.pending.shift();
      if (!head) continue; // nothing asked: cannot happen with a sane worker; ignore
      this.lastAnswer = Date.now();
      head.resolve(parseAnswer(lines, line.slice(TRAILER_MARK.length), head.req, this.pool.mode));
      this.pool.pump();
      if (this.pending.length === 0) this.setRef(false);
    }
  }

  send(p: Pending): void {
    p.sentAt = Date.now();
    this.pending.push(p);
    if (this.pending.length === 1) this.setRef(true);
    this.proc.stdin.write(p.frame);
  }

  /** An idle worker does not keep Node alive (a pool that is never closed cannot hang a
   * process); a busy one does, so pending results are awaited. */
  setRef(busy: boolean): void {
    const proc = this.proc;
    if (!proc) return;
    const streams = [proc.stdin, proc.stdout, proc.stderr] as unknown as Array<{ ref?: () => void; unref?: () => void }>;
    if (busy) {
      proc.ref();
      for (const s of streams) s.ref?.();
    } else {
      proc.unref();
      for (const s of streams) s.unref?.();
    }
  }

  /** The head request has been running longer than any limit allows: the worker is stuck. */
  checkStuck(now: number, limitMs: number): void {
    const head = this.pending[0];
    if (!head || this.dead) return;
    // A request may carry a longer time limit than the pool's default.
    const own = head.req.kind !== 'stats' ? head.req.timeout_s : undefined;
    if (own !== undefined) limitMs = Math.max(limitMs, (own + (this.pool.workerConfig.kill_grace_s as number)) * 1000 + 10000);
    const started = Math.max(head.sentAt, this.lastAnswer);
    if (now - started > limitMs) this.restart(`sandbox worker stopped answering after ${Math.round((now - started) / 1000)}s`);
  }

  /** Replaces the process: the head request is answered as a crash, the others are re-sent. */
  private restart(why: string): void {
    const old = this.proc;
    const [head, ...rest] = this.pending;
    this.pending = [];
    if (old) {
      old.removeAllListeners('exit');
      old.stdout.removeAllListeners('data');
      terminate(old);
    }
    this.removeDir();
    if (head) head.resolve(failure(head.req, 'error', 'crash', why, this.pool.mode));
    if (this.pool.closed) return;
    this.start();
    for (const p of rest) this.send(p);
    this.pool.pump();
    if (this.pending.length === 0) this.setRef(false);
  }

  close(): void {
    this.setRef(true); // keep Node alive until the worker has exited and its directory is gone
    this.proc.stdin.end();
    const proc = this.proc;
    // The worker exits on EOF after its current program (bounded by the time limit); make sure.
    const timer = setTimeout(() => terminate(proc), (this.pool.stuckMs as number) - 9000);
    timer.unref();
    proc.once('exit', () => {
      clearTimeout(timer);
      this.removeDir();
    });
  }
}

export class SandboxPool {
  readonly mode: IsolationMode;
  readonly isolationReason: string;
  readonly python: string;
  readonly workerConfig: Record<string, unknown>;
  closed = false;
  private readonly workers: Worker[];
  private queue: Pending[] = [];
  private watchdog: NodeJS.Timeout;
  readonly stuckMs: number;
  private nextId = 0;

  constructor(readonly size = 1, readonly options: SandboxOptions = {}) {
    this.python = options.python ?? 'python3';
    const iso = resolveIsolation(options.isolation, this.python);
    this.mode = iso.mode;
    this.isolationReason = iso.reason;
    const timeoutS = options.timeoutS ?? 5;
    const killGraceS = options.killGraceS ?? 0.5;
    this.workerConfig = {
      timeout_s: timeoutS,
      kill_grace_s: killGraceS,
      max_events: options.maxEvents ?? 10000,
      repr_cap: options.reprCap ?? 256,
      memory_mb: options.memoryMb ?? 1024,
      fsize_mb: options.fsizeMb ?? 16,
      output_cap: options.outputCap ?? 65536,
      seed: options.seed ?? 0,
      session_programs: options.sessionPrograms ?? 1000,
      session_cpu_s: Math.round(options.sessionCpuS ?? 60),
      preimport: options.preimport ?? [],
      first_look_modules: options.firstLookModules ?? [],
    };
    this.stuckMs = (timeoutS + killGraceS) * 1000 + 10000;
    this.workers = Array.from({ length: Math.max(1, size) }, () => new Worker(this));
    this.watchdog = setInterval(() => this.checkStuck(), 1000);
    this.watchdog.unref();
  }

  /** Runs one request; always resolves (a worker failure becomes an error result). */
  run(req: SandboxRequest): Promise<SandboxResult> {
    if (this.closed) return Promise.reject(new Error('SandboxPool is closed'));
    return new Promise((resolve) => {
      this.queue.push({ req, frame: this.frame(req), sentAt: 0, resolve });
      this.pump();
    });
  }

  /** Traces `code` with `entryCall` (e.g. `f(3)`); the result is a TraceRecord-shaped object. */
  trace(id: string, code: string, entryCall: string, limits: { timeoutS?: number; maxEvents?: number } = {}): Promise<SandboxResult> {
    const req: SandboxRequest = { id, kind: 'trace', code, entry_call: entryCall };
    if (limits.timeoutS !== undefined) req.timeout_s = limits.timeoutS;
    if (limits.maxEvents !== undefined) req.max_events = limits.maxEvents;
    return this.run(req);
  }

  /** Traces one entry point of a repository (src/trace/repo.ts builds `spec`). */
  traceRepoEntry(id: string, spec: string, entry: string, limits: { timeoutS?: number; maxEvents?: number } = {}): Promise<SandboxResult> {
    const req: SandboxRequest = { id, kind: 'repo', spec, entry };
    if (limits.timeoutS !== undefined) req.timeout_s = limits.timeoutS;
    if (limits.maxEvents !== undefined) req.max_events = limits.maxEvents;
    return this.run(req);
  }

  /** Runs `code` as `__main__` without tracing. */
  exec(code: string, limits: { timeoutS?: number; id?: string } = {}): Promise<SandboxResult> {
    const req: SandboxRequest = { id: limits.id ?? `exec-${this.nextId++}`, kind: 'exec', code };
    if (limits.timeoutS !== undefined) req.timeout_s = limits.timeoutS;
    return this.run(req);
  }

  /** CPU seconds used so far by the workers and their children, and how many programs ran in
   * a shared child or a fresh fork (for benchmarks and tests). */
  async stats(): Promise<{ cpuSeconds: number; shared: number; forked: number }> {
    const all = await Promise.all(
      this.workers.map(
        (w) => new Promise<SandboxResult>((resolve) => {
          const req: SandboxRequest = { id: 'stats', kind: 'stats' };
          w.send({ req, frame: this.frame(req), sentAt: 0, resolve });
        }),
      ),
    );
    const sum = (keys: string[]) => all.reduce((t, r) => t + keys.reduce((u, k) => u + Number(r[k] ?? 0), 0), 0);
    return {
      cpuSeconds: sum(['user', 'system', 'children_user', 'children_system']),
      shared: sum(['shared']),
      forked: sum(['forked']),
    };
  }

  /** A request as the worker reads it (src/trace/protocol.py): six little-endian uint32 (kind,
   * wall-clock limit in ms, event cap, byte lengths of id, code and entry call), then those three
   * as UTF-8. */
  private frame(req: SandboxRequest): Buffer {
    const header = Buffer.alloc(24);
    if (req.kind === 'stats') {
      header.writeUInt32LE('s'.charCodeAt(0), 0);
      return header;
    }
    const id = Buffer.from(req.id, 'utf8');
    const code = Buffer.from(req.kind === 'repo' ? req.spec : req.code, 'utf8');
    const call = Buffer.from(req.kind === 'trace' ? req.entry_call : req.kind === 'repo' ? req.entry : '', 'utf8');
    const timeoutS = req.timeout_s ?? (this.workerConfig.timeout_s as number);
    const fields = [
      ({ trace: 't', exec: 'x', repo: 'r' } as const)[req.kind].charCodeAt(0),
      Math.min(0xffffffff, Math.round(timeoutS * 1000)),
      req.kind === 'exec' ? 0 : req.max_events ?? 0,
      id.length,
      code.length,
      call.length,
    ];
    fields.forEach((v, i) => header.writeUInt32LE(v, 4 * i));
    return Buffer.concat([header, id, code, call]);
  }

  /** Hands queued requests to the least busy workers. */
  pump(): void {
    while (this.queue.length) {
      let best: Worker | undefined;
      for (const w of this.workers) {
        if (w.dead || w.pending.length >= PIPELINE_DEPTH) continue;
        if (!best || w.pending.length < best.pending.length) best = w;
      }
      if (!best) return;
      best.send(this.queue.shift()!);
    }
  }

  private checkStuck(): void {
    const now = Date.now();
    for (const w of this.workers) w.checkStuck(now, this.stuckMs);
  }

  /** Ends the workers (after their current requests) and removes their directories. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchdog);
    const exits = this.workers.map(
      (w) => new Promise<void>((resolve) => {
        if (w.dead || !w.proc || w.proc.exitCode !== null || w.proc.signalCode !== null) return resolve();
        w.proc.once('exit', () => resolve());
      }),
    );
    for (const w of this.workers) if (w.proc) w.close();
    for (const p of this.queue) p.resolve(failure(p.req, 'error', 'crash', 'sandbox pool closed', this.mode));
    this.queue = [];
    await Promise.all(exits);
  }
}

/** SIGTERM lets the worker kill its running program's process group; SIGKILL follows. */
function terminate(proc: ChildProcessWithoutNullStreams): void {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill('SIGTERM');
  const t = setTimeout(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  }, 1000);
  t.unref();
}

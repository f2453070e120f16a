/**
 * The two adapters of the side-by-side check, driven by the same client library
 * (@vscode/debugadapter-testsupport's DebugClient) with the same requests, each reduced to the
 * same observation at every stop: file, line, function, depth and the top frame's locals.
 *
 * debugpy runs the program file itself, entered from a runner script whose `main` sits at the
 * lines it has in ndbg's CONTEXT (the program, a blank line, `def main(): return CALL`), so line
 * numbers agree in both files; its first stop is a breakpoint on main's line, ndbg's is its
 * entry stop there. The runner's module frame is not counted (ndbg has none): a stop in it is
 * the end of the program.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';

export interface ProgramCase {
  id: string;
  code: string;
  call: string;
}

export type Observation =
  | { kind: 'stop'; file: string; line: number; func: string; depth: number; locals: Record<string, string> }
  | { kind: 'exit' };

export type RequestKind = 'stepIn' | 'next' | 'stepOut' | 'continue' | 'breakpoint';

export interface Driver {
  /** Launches and returns the first stop. */
  launch(): Promise<Observation>;
  /** `breakpoint` sets one line breakpoint (replacing the last) and continues. */
  request(kind: RequestKind, line?: number): Promise<Observation>;
  close(): Promise<void>;
}

// A model-mode stop on two busy cores (the model's first decode, sessions re-anchoring) took
// more than 15 s; the limit is for a hung adapter, not a slow one.
const TIMEOUT_MS = 120000;

/** Files for one program: the program itself and debugpy's runner. */
export function writeProgram(dir: string, p: ProgramCase): { program: string; runner: string; mainLine: number } {
  const code = p.code.replace(/\n+$/, '');
  const n = code.split('\n').length;
  const program = path.join(dir, 'program.py');
  const runner = path.join(dir, 'runner.py');
  fs.writeFileSync(program, code + '\n');
  // Lines 1..n blank, n+1 blank, n+2 `def main():`, n+3 `return CALL`: as in ndbg's CONTEXT.
  const head = '\n'.repeat(n + 1) + `def main():\n    return ${p.call}\n`;
  // The tracer runs the program as module `__ndbg__` (class reprs say `<__ndbg__.Box ...>`): so does the runner.
  const tail = `\n\n__name__ = '__ndbg__'\nimport os as _os\n_p = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), 'program.py')\nexec(compile(open(_p).read(), _p, 'exec'), globals())\nmain()\n`;
  fs.writeFileSync(runner, head + tail);
  return { program, runner, mainLine: n + 3 };
}

/** `python` when it has debugpy, with the adapter's directory, or why not. */
export function debugpyAdapter(python: string): { adapter: string } | { skip: string } {
  const { spawnSync } = require('child_process') as typeof import('child_process');
  const r = spawnSync(python, ['-c', 'import debugpy, os; print(os.path.join(os.path.dirname(debugpy.__file__), "adapter"))'], { encoding: 'utf8' });
  if (r.status !== 0) return { skip: `${python} cannot import debugpy (${(r.stderr || '').trim().split('\n').pop()}); run bash .ci/setup.d/40-debugpy.sh` };
  return { adapter: r.stdout.trim() };
}

/**
 * The first of `events` the client sees after now. One timer, cleared either way: racing two
 * `waitForEvent`s leaves the loser's timer running, which kept a finished process (Jest) alive
 * for the whole timeout.
 */
export function firstEvent<E extends string>(dc: DebugClient, events: readonly E[], timeoutMs: number): Promise<E> {
  return new Promise((resolve, reject) => {
    const handlers = events.map((e) => [e, () => settle(() => resolve(e))] as const);
    const timer = setTimeout(() => settle(() => reject(new Error(`none of ${events.join(', ')} after ${timeoutMs} ms`))), timeoutMs);
    function settle(then: () => void): void {
      clearTimeout(timer);
      for (const [e, h] of handlers) dc.removeListener(e, h);
      then();
    }
    for (const [e, h] of handlers) dc.once(e, h);
  });
}

/** Sends a stepping request and waits for what it leads to: a stop or the end. */
export async function stopOrEnd(dc: DebugClient, send: () => Promise<unknown>, timeoutMs = TIMEOUT_MS): Promise<'stopped' | 'terminated'> {
  const next = firstEvent(dc, ['stopped', 'terminated'] as const, timeoutMs);
  next.catch(() => undefined);
  await send();
  return next;
}

abstract class BaseDriver implements Driver {
  protected breakpointLines: number[] = [];
  protected ended = false;
  constructor(protected readonly dc: DebugClient, protected readonly files: { program: string; runner: string; mainLine: number }) {}

  abstract launch(): Promise<Observation>;
  protected abstract observe(): Promise<Observation>;

  async request(kind: RequestKind, line?: number): Promise<Observation> {
    if (this.ended) return { kind: 'exit' };
    if (kind === 'breakpoint') {
      this.breakpointLines = [line as number];
      await this.dc.setBreakpointsRequest({ source: { path: this.files.program }, breakpoints: [{ line: line as number }] });
    }
    const threadId = 1;
    const send = {
      stepIn: () => this.dc.stepInRequest({ threadId }),
      next: () => this.dc.nextRequest({ threadId }),
      stepOut: () => this.dc.stepOutRequest({ threadId }),
      continue: () => this.dc.continueRequest({ threadId }),
      breakpoint: () => this.dc.continueRequest({ threadId }),
    }[kind];
    return this.after(await stopOrEnd(this.dc, send));
  }

  protected async after(r: 'stopped' | 'terminated'): Promise<Observation> {
    if (r === 'terminated') {
      this.ended = true;
      return { kind: 'exit' };
    }
    return this.observe();
  }

  protected async topFrames(): Promise<DebugProtocol.StackFrame[]> {
    return (await this.dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  }

  protected async scopeLocals(frameId: number): Promise<DebugProtocol.Variable[]> {
    const scopes = (await this.dc.scopesRequest({ frameId })).body.scopes;
    if (scopes.length === 0) return [];
    return (await this.dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
  }

  async close(): Promise<void> {
    // An adapter whose program has ended may not answer disconnect; do not wait the full timeout.
    this.dc.defaultTimeout = 2000;
    await this.dc.stop().catch(() => undefined);
  }
}

export class DebugpyDriver extends BaseDriver {
  private threadId = 1;
  static async create(python: string, adapter: string, dir: string, p: ProgramCase): Promise<DebugpyDriver> {
    const files = writeProgram(dir, p);
    const dc = new DebugClient(python, adapter, 'python', { env: { ...process.env, PYTHONHASHSEED: '0' } });
    dc.defaultTimeout = TIMEOUT_MS;
    dc.setMaxListeners(1000);
    await dc.start();
    return new DebugpyDriver(dc, files);
  }

  async launch(): Promise<Observation> {
    const dc = this.dc;
    await dc.initializeRequest({ adapterID: 'python', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    const launched = dc.launchRequest({
      program: this.files.runner,
      cwd: path.dirname(this.files.runner),
      console: 'internalConsole',
      justMyCode: true,
      showReturnValue: false,
      variablePresentation: { all: 'inline' },
      env: { PYTHONHASHSEED: '0' },
    } as DebugProtocol.LaunchRequestArguments);
    const stopped = dc.waitForEvent('stopped', TIMEOUT_MS);
    await dc.waitForEvent('initialized', TIMEOUT_MS);
    await dc.setBreakpointsRequest({ source: { path: this.files.runner }, breakpoints: [{ line: this.files.mainLine }] });
    await dc.setExceptionBreakpointsRequest({ filters: [] });
    await dc.configurationDoneRequest();
    await launched;
    this.threadId = (await stopped).body.threadId;
    return this.observe();
  }

  override async request(kind: RequestKind, line?: number): Promise<Observation> {
    const o = await super.request(kind, line);
    return o;
  }

  protected async observe(): Promise<Observation> {
    const frames = (await this.dc.stackTraceRequest({ threadId: this.threadId })).body.stackFrames;
    const isModule = (f: DebugProtocol.StackFrame) => f.source?.path === this.files.runner && f.name === '<module>';
    if (frames.length === 0 || isModule(frames[0])) {
      // Back in the runner's module: the program (main) has returned. Run it to its end.
      const r = await stopOrEnd(this.dc, () => this.dc.continueRequest({ threadId: this.threadId }));
      this.ended = true;
      return r === 'terminated' ? { kind: 'exit' } : this.observe();
    }
    const shown = frames.filter((f) => !isModule(f));
    const top = shown[0];
    const locals: Record<string, string> = {};
    for (const v of await this.scopeLocals(top.id)) {
      const name = v.name;
      // `.0` (a comprehension's iterator) is no expression: its value is the view's.
      if (!/^[A-Za-z_]\w*$/.test(name)) {
        locals[name] = normalizeRepr(v.value);
        continue;
      }
      // The variables view shortens long values (pydevd's safe repr); the full repr, as the
      // tracer writes it, is asked for as hex so that no quoting stands between.
      const r = await this.dc.evaluateRequest({ expression: `repr(${name}).encode('utf-8').hex()`, frameId: top.id, context: 'repl' });
      locals[name] = normalizeRepr(Buffer.from(r.body.result.replace(/^'|'$/g, ''), 'hex').toString('utf8'));
    }
    return { kind: 'stop', file: this.fileOf(top), line: top.line, func: top.name, depth: shown.length - 1, locals };
  }

  private fileOf(f: DebugProtocol.StackFrame): string {
    if (f.source?.path === this.files.program) return 'program';
    if (f.source?.path === this.files.runner) return 'entry';
    return f.source?.path ?? '?';
  }
}

export class NdbgDriver extends BaseDriver {
  static async create(port: number, dir: string, p: ProgramCase, extra: Record<string, unknown> = {}): Promise<NdbgDriver> {
    const files = writeProgram(dir, p);
    const dc = new DebugClient('node', 'unused', 'ndbg');
    dc.defaultTimeout = TIMEOUT_MS;
    dc.setMaxListeners(1000);
    await dc.start(port);
    return new NdbgDriver(dc, files, p, extra);
  }

  constructor(dc: DebugClient, files: { program: string; runner: string; mainLine: number }, private readonly p: ProgramCase, private readonly extra: Record<string, unknown>) {
    super(dc, files);
  }

  async launch(): Promise<Observation> {
    const dc = this.dc;
    await dc.initializeRequest({ adapterID: 'ndbg', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    const launched = dc.launchRequest({ program: this.files.program, call: this.p.call, stopOnEntry: true, ...this.extra } as DebugProtocol.LaunchRequestArguments);
    const stopped = dc.waitForEvent('stopped', 10 * TIMEOUT_MS);
    await Promise.race([dc.waitForEvent('initialized', 10 * TIMEOUT_MS), launched]);
    await dc.configurationDoneRequest();
    await launched;
    await stopped;
    return this.observe();
  }

  protected async observe(): Promise<Observation> {
    const frames = await this.topFrames();
    const top = frames[0];
    const locals: Record<string, string> = {};
    for (const v of await this.scopeLocals(top.id)) locals[v.name] = v.value;
    const file = top.source?.path === this.files.program ? 'program' : top.source?.sourceReference ? 'entry' : top.source?.path ?? '?';
    return { kind: 'stop', file, line: top.line, func: top.name, depth: frames.length - 1, locals };
  }
}

/** The tracer's repr normalisation (src/trace/tracer.py safe_repr): addresses, then the 256-character cut. */
export function normalizeRepr(text: string, cap = 256): string {
  let t = text.replace(/ at 0x[0-9a-fA-F]+/g, ' at 0x\u2026');
  if (t.length > cap) {
    const keep = cap - 3;
    const head = Math.floor((keep + 1) / 2);
    const tail = Math.floor(keep / 2);
    t = t.slice(0, head) + '...' + (tail ? t.slice(t.length - tail) : '');
  }
  return t;
}

export function tempDir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

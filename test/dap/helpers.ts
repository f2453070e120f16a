import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type * as net from 'net';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { serveTcp, type ProgramLoader } from '../../src/dap/server';
import { stopOrEnd } from '../../bench/dap/clients';

export const COUNT = path.resolve(__dirname, '..', '..', 'examples', 'count.py');

/** An in-process `ndbg dap` server on a free port and a client connected to it. */
export class Harness {
  private server: net.Server | undefined;
  private clients: DebugClient[] = [];
  port = 0;

  async start(load?: ProgramLoader): Promise<void> {
    const s = await serveTcp(0, '127.0.0.1', process.cwd(), load);
    this.server = s.server;
    this.port = s.port;
  }

  async client(): Promise<DebugClient> {
    const dc = new DebugClient('node', 'unused', 'ndbg');
    dc.defaultTimeout = 30000;
    dc.setMaxListeners(200);
    await dc.start(this.port);
    this.clients.push(dc);
    return dc;
  }

  /** initialize + launch (+ optional breakpoints) + configurationDone; resolves at the first stop. */
  async launch(args: Record<string, unknown>, breakpoints: number[] = []): Promise<{ dc: DebugClient; init: DebugProtocol.InitializeResponse }> {
    const dc = await this.client();
    const init = await dc.initializeRequest({ adapterID: 'ndbg', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
    const stopped = dc.waitForEvent('stopped');
    const launched = dc.launchRequest(args as DebugProtocol.LaunchRequestArguments);
    await dc.waitForEvent('initialized');
    if (breakpoints.length) await dc.setBreakpointsRequest({ source: { path: args.program as string }, breakpoints: breakpoints.map((line) => ({ line })) });
    await dc.configurationDoneRequest();
    await launched;
    await stopped;
    return { dc, init };
  }

  async stop(): Promise<void> {
    for (const dc of this.clients) {
      dc.defaultTimeout = 2000;
      await dc.stop().catch(() => undefined);
    }
    this.server?.close();
  }
}

export interface Top {
  name: string;
  line: number;
  path?: string;
  sourceReference?: number;
  depth: number;
  locals: Record<string, string>;
}

export async function top(dc: DebugClient): Promise<Top> {
  const frames = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames;
  const f = frames[0];
  const scopes = (await dc.scopesRequest({ frameId: f.id })).body.scopes;
  const vars = (await dc.variablesRequest({ variablesReference: scopes[0].variablesReference })).body.variables;
  return { name: f.name, line: f.line, path: f.source?.path, sourceReference: f.source?.sourceReference, depth: frames.length - 1, locals: Object.fromEntries(vars.map((v) => [v.name, v.value])) };
}

/** Sends a stepping request and waits for what it leads to: a stop or the end (bench/dap/clients.ts). */
export function step(dc: DebugClient, send: () => Promise<unknown>): Promise<'stopped' | 'terminated'> {
  return stopOrEnd(dc, send, dc.defaultTimeout);
}

export function writeProgram(code: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-dap-test-'));
  const file = path.join(dir, 'prog.py');
  fs.writeFileSync(file, code);
  return file;
}

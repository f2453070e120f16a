/**
 * Where the adapter talks: stdio (what VS Code and nvim-dap start by default) or a TCP port
 * (clients that connect to a running adapter; one adapter session per connection).
 */
import * as net from 'net';
import { NdbgDebugAdapter } from './adapter';
import { loadProgram, type LaunchConfig, type LoadedProgram } from './launch';

export type ProgramLoader = (config: LaunchConfig, cwd: string) => Promise<LoadedProgram>;

/** Serves DAP on stdin/stdout. Nothing else may write to stdout now: it would break the framing. */
export function serveStdio(cwd = process.cwd()): NdbgDebugAdapter {
  const adapter = new NdbgDebugAdapter(cwd);
  adapter.start(process.stdin, process.stdout);
  return adapter;
}

/** Listens on `port` (0: any free one); resolves once listening, with the port. */
export function serveTcp(port: number, host = '127.0.0.1', cwd = process.cwd(), load: ProgramLoader = loadProgram): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer((socket) => {
    const adapter = new NdbgDebugAdapter(cwd, load);
    adapter.setRunAsServer(true);
    adapter.start(socket, socket);
    socket.on('error', () => socket.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve({ server, port: (server.address() as net.AddressInfo).port }));
  });
}

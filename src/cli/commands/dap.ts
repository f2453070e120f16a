import type { CommandModule } from 'yargs';
import { serveStdio, serveTcp } from '../../dap';
import { UserError } from '../../util/errors';

interface DapArgs {
  port?: number;
  host: string;
}

/** `ndbg dap`: the neural debugger as a Debug Adapter Protocol server (docs/dap.md). */
export const dapCommand: CommandModule<object, DapArgs> = {
  command: 'dap',
  describe: 'Serve the neural debugger over the Debug Adapter Protocol (stdio, or --port for TCP) for VS Code, nvim-dap and other DAP clients',
  builder: (y) =>
    y
      .option('port', { type: 'number', describe: 'listen on this TCP port instead of stdio (0: any free port, printed on stderr)' })
      .option('host', { type: 'string', default: '127.0.0.1', describe: 'address to listen on with --port' })
      .example('$0 dap', 'stdio: what an editor starts (see editors/ and docs/dap.md)')
      .example('$0 dap --port 4711', 'a TCP server a client connects to'),
  handler: async (args) => {
    // Libraries that log (tfjs's backend notes, progress) must not write into the DAP stream on stdout.
    console.log = console.info = console.warn = (...a: unknown[]) => process.stderr.write(`${a.map(String).join(' ')}\n`);
    if (args.port === undefined) {
      serveStdio();
      await new Promise<void>((resolve) => process.stdin.on('close', resolve));
      return;
    }
    if (!(Number.isInteger(args.port) && args.port >= 0 && args.port < 65536)) throw new UserError(`--port must be an integer in 0..65535, got ${args.port}`);
    const { port } = await serveTcp(args.port, args.host).catch((e: Error) => {
      throw new UserError(`--port ${args.port}: cannot listen on ${args.host}: ${e.message}`);
    });
    process.stderr.write(`ndbg dap: listening on ${args.host}:${port}\n`);
    await new Promise<void>(() => undefined);
  },
};

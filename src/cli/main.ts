import yargs from 'yargs';
import { commands } from './commands';
import { isUserError } from '../util/errors';

/**
 * The `ndbg` entry point. Commands live one per file in `src/cli/commands/` and are listed in
 * `src/cli/commands.ts`. A UserError (bad input) prints one line and exits non-zero; anything
 * else is a bug and keeps its stack trace.
 */
export async function main(argv: string[]): Promise<void> {
  let cli = yargs(argv)
    .scriptName('ndbg')
    .usage('$0 <command> [options]')
    .strict()
    .demandCommand(1, 'Pick a command; `ndbg --help` lists them.')
    .recommendCommands()
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(110, process.stdout.columns || 110))
    .fail((msg, err) => {
      if (err) throw err;
      process.stderr.write(`ndbg: ${msg}\nRun with --help for usage.\n`);
      process.exit(2);
    });
  for (const command of commands) cli = cli.command(command);
  try {
    await cli.parseAsync();
  } catch (e) {
    reportAndExit(e);
  }
}

export function reportAndExit(e: unknown): never {
  if (isUserError(e)) {
    process.stderr.write(`ndbg: ${e.message}\n`);
    process.exit(e.exitCode);
  }
  process.stderr.write(`ndbg: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
}

import yargs from 'yargs';
import { commands } from './commands';
import { isUserError, UserError } from '../util/errors';
import { setSkipInvalid, skippedLines } from '../util/jsonl';

/**
 * The `ndbg` entry point. Commands live one per file in `src/cli/commands/` and are listed in
 * `src/cli/commands.ts`.
 *
 * The bad-input policy (docs/architecture.md, "Bad input"): a usage error — a flag yargs rejects,
 * a `.check()` that fails, or a UserError thrown by a command — prints one line `ndbg: ...` on
 * stderr and exits with the error's code (2 for usage and input errors), no stack trace.
 * Anything else is a bug and keeps its stack trace (exit 1).
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
    .option('skip-invalid', {
      type: 'boolean',
      default: false,
      global: true,
      describe: 'Skip malformed input lines (bad JSON, a record missing a field), count them and report them at the end, instead of stopping at the first',
    })
    .middleware((a) => setSkipInvalid(Boolean(a['skip-invalid'])))
    .fail((msg, err) => {
      if (err) throw err;
      throw new UserError(`${usageMessage(msg)} (see --help)`);
    });
  for (const command of commands) cli = cli.command(command);
  try {
    await cli.parseAsync();
  } catch (e) {
    reportSkipped();
    reportAndExit(e);
  }
  reportSkipped();
}

function reportSkipped(): void {
  const s = skippedLines();
  if (s.count === 0) return;
  process.stderr.write(`ndbg: skipped ${s.count} malformed input line${s.count === 1 ? '' : 's'} (--skip-invalid); first: ${s.examples[0]}\n`);
}

/**
 * yargs reports an unknown `--bogus-flag` under both of its spellings ("bogus-flag, bogusFlag"):
 * keep the one the user typed.
 */
export function usageMessage(msg: string): string {
  const m = /^(Unknown arguments?): (.*)$/s.exec(msg);
  if (!m) return msg.replace(/\s*\n\s*/g, '; ');
  const names = m[2].split(', ');
  const typed = new Set(names);
  const kept = names.filter((n) => !(/[A-Z]/.test(n) && typed.has(n.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))));
  return `${kept.length === 1 ? 'Unknown argument' : 'Unknown arguments'}: ${kept.join(', ')}`;
}

export function reportAndExit(e: unknown): never {
  if (isUserError(e)) {
    process.stderr.write(`ndbg: ${e.message}\n`);
    process.exit(e.exitCode);
  }
  process.stderr.write(`ndbg: internal error: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
}

import type { CommandModule } from 'yargs';

/** Every `ndbg` subcommand, one file each under ./commands. Add new commands here. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [];

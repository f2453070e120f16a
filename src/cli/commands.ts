import type { CommandModule } from 'yargs';
import { traceCommand } from './commands/trace';
import { traceRepoCommand } from './commands/trace-repo';
import { dataCommand } from './commands/data';
import { tokenizerCommand } from './commands/tokenizer';
import { trainCommand } from './commands/train';
import { reportCommand } from './commands/report';
import { ndlCommand } from './commands/ndl';
import { oracleCommand } from './commands/oracle';
import { programsCommand } from './commands/programs';
import { modelCommand } from './commands/model';
import { generateCommand } from './commands/generate';
import { exportHfCommand } from './commands/export-hf';
import { importHfCommand } from './commands/import-hf';
import { evalCommand } from './commands/eval';
import { quickstartCommand } from './commands/quickstart';
import { debugCommand } from './commands/debug';
import { backendCommand } from './commands/backend';
import { shardCommand } from './commands/shard';
import { sweepCommand } from './commands/sweep';
import { scalingCommand } from './commands/scaling';
import { dapCommand } from './commands/dap';

/** Every `ndbg` subcommand, one file each under ./commands. Add new commands here. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const commands: CommandModule<any, any>[] = [traceCommand, traceRepoCommand, dataCommand, tokenizerCommand, trainCommand, reportCommand, ndlCommand, oracleCommand, programsCommand, modelCommand, generateCommand, exportHfCommand, importHfCommand, evalCommand, quickstartCommand, debugCommand, dapCommand, shardCommand, backendCommand, sweepCommand, scalingCommand];

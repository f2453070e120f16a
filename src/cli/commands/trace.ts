import * as fs from 'fs';
import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { z } from 'zod';
import { loadConfig } from '../../util/config';
import { UserError } from '../../util/errors';
import { JsonlWriter } from '../../util/jsonl';
import { withConfigOptions } from '../options';
import { formatSummary, runTraceBatch } from '../../trace/batch';
import { parseShardSpec } from '../../util/shard';
import { formatTrace } from '../../trace/format';
import { resolveIsolation, traceProgram } from '../../trace/index';
import { checkPythonSyntax } from '../../trace/syntax';
import type { SandboxOptions } from '../../trace/pool';

/** The `trace` section of a config file (`--set trace.timeout_s=2`); flags override it. */
export const TraceConfigSchema = z
  .object({
    timeout_s: z.number().positive().default(5),
    max_events: z.number().int().positive().default(10000),
    repr_cap: z.number().int().min(8).default(256),
    memory_mb: z.number().int().min(0).default(1024),
    fsize_mb: z.number().int().positive().default(16),
    output_cap: z.number().int().min(0).default(65536),
    seed: z.number().int().default(0),
    isolation: z.enum(['auto', 'bwrap', 'guards']).optional(),
    /** Programs one shared child may run in a row (docs/trace.md#shared-process); 0 forks each. */
    session_programs: z.number().int().min(0).default(1000),
  })
  .strict();

const RootSchema = z.object({ trace: TraceConfigSchema.default({}) }).passthrough();

const HELP = `Trace Python programs with sys.settrace in a sandbox (docs/trace.md).

  ndbg trace --program examples/count.py --call 'count("berry", "r")'
  ndbg trace --input programs.jsonl --out traces.jsonl --workers 2 [--shard 0/4]

Each program runs in a forked child of a warm worker with a wall-clock kill, CPU/memory/file-size/
process rlimits, a private temp working directory and no stdin: a fresh child, or for programs
that can leave no state behind (no imports, classes or attribute writes; docs/trace.md) one
shared child that runs them in turn, with identical traces (--fork-each: always a fresh one). Isolation: bubblewrap (read-only
filesystem, no network, own pid namespace) when it works on this machine, else rlimits plus
Python audit-hook guards; NDBG_SANDBOX=auto|bwrap|guards or --isolation chooses. The mode is
printed and stored in every record ("isolation").`;

export const traceCommand: CommandModule = {
  command: 'trace',
  describe: 'Trace Python programs in the sandbox: one .py file and call, or a JSONL batch',
  builder: (y: Argv) =>
    withConfigOptions(y)
      .usage(process.argv.includes('--help') || process.argv.includes('-h') ? `${HELP}\n\n${activeIsolation()}` : HELP)
      .option('program', { type: 'string', describe: 'A .py file to trace (with --call)' })
      .option('call', { type: 'string', describe: "Entry call for --program, e.g. 'count(\"berry\", \"r\")'" })
      .option('json', { type: 'boolean', default: false, describe: 'With --program: print the JSONL record instead of the readable trace' })
      .option('input', { type: 'string', describe: 'JSONL of programs {id, code, input, entry?} (CruxEval style)' })
      .option('out', { type: 'string', describe: 'Output JSONL of trace records (appended; ids already there are skipped)' })
      .option('workers', { type: 'number', default: 1, describe: 'Sandbox workers (programs traced in parallel)' })
      .option('shard', { type: 'string', describe: 'I/N: trace only the ids whose hash is I mod N (I from 0); auto: I and N from a Slurm array or Kubernetes Indexed Job (docs/scale-out.md)' })
      .option('timeout', { type: 'number', describe: 'Wall-clock seconds per program (trace.timeout_s, default 5)' })
      .option('max-events', { type: 'number', describe: 'Event cap per program; status never beyond it (trace.max_events, default 10000)' })
      .option('memory-mb', { type: 'number', describe: 'Address-space limit per program in MiB (trace.memory_mb, default 1024)' })
      .option('isolation', { type: 'string', choices: ['auto', 'bwrap', 'guards'], describe: 'Sandbox isolation (default NDBG_SANDBOX or auto)' })
      .option('fork-each', { type: 'boolean', default: false, describe: 'A fresh fork for every program, none shared (trace.session_programs=0)' })
      .option('quiet', { type: 'boolean', default: false, describe: 'No progress bar' })
      .check((a) => {
        if (a.program && a.input) throw new UserError('use either --program or --input, not both');
        if (!a.program && !a.input) throw new UserError('give --program FILE.py --call CALL, or --input programs.jsonl --out traces.jsonl');
        if (a.program && !a.call) throw new UserError('--program needs --call, e.g. --call \'count("berry", "r")\'');
        if (a.input && !a.out) throw new UserError('--input needs --out');
        if (a.shard && !a.input) throw new UserError('--shard applies to --input batches');
        if (!Number.isInteger(a.workers) || (a.workers as number) < 1) throw new UserError(`--workers must be a positive integer, got ${a.workers}`);
        return true;
      }),
  handler: async (a) => {
    const args = a as unknown as Record<string, unknown>;
    const cfg = loadConfig(RootSchema, { file: args.config as string | undefined, overrides: args.set as string[] }).trace;
    const sandbox: SandboxOptions = {
      timeoutS: (args.timeout as number | undefined) ?? cfg.timeout_s,
      maxEvents: (args['max-events'] as number | undefined) ?? cfg.max_events,
      memoryMb: (args['memory-mb'] as number | undefined) ?? cfg.memory_mb,
      reprCap: cfg.repr_cap,
      fsizeMb: cfg.fsize_mb,
      outputCap: cfg.output_cap,
      seed: cfg.seed,
      isolation: (args.isolation as SandboxOptions['isolation']) ?? cfg.isolation,
      sessionPrograms: args['fork-each'] ? 0 : cfg.session_programs,
    };
    if (args.program) await traceOne(args, sandbox);
    else await traceMany(args, sandbox);
  },
};

/** One line for --help: what `auto` picks on this machine (runs the bwrap probe). */
function activeIsolation(): string {
  try {
    const iso = resolveIsolation();
    return `On this machine: ${iso.mode} (${iso.reason}).`;
  } catch (e) {
    return `On this machine: ${(e as Error).message}`;
  }
}

async function traceOne(args: Record<string, unknown>, sandbox: SandboxOptions): Promise<void> {
  const file = args.program as string;
  let code: string;
  try {
    code = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`--program ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  // A syntax error names the user's file and line (or the --call), not the generated wrapper's.
  checkPythonSyntax(file, code, args.call as string);
  const rec = await traceProgram({ id: path.basename(file, '.py'), code, call: args.call as string }, sandbox);
  if (args.out) {
    const w = new JsonlWriter(args.out as string, true);
    w.write(rec);
    w.close();
  }
  if (args.json) process.stdout.write(JSON.stringify(rec) + '\n');
  else process.stdout.write(formatTrace(rec));
  if (args.out) process.stderr.write(`appended the record to ${args.out as string}\n`);
}

async function traceMany(args: Record<string, unknown>, sandbox: SandboxOptions): Promise<void> {
  const summary = await runTraceBatch({
    input: args.input as string,
    out: args.out as string,
    workers: args.workers as number,
    shard: args.shard ? parseShardSpec(args.shard as string) : undefined,
    sandbox,
    quiet: args.quiet as boolean,
  });
  process.stderr.write(formatSummary(summary) + '\n');
}

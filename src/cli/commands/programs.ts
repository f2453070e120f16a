import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { loadConfig } from '../../util/config';
import { UserError } from '../../util/errors';
import { AtomicJsonlWriter, JsonlWriter } from '../../util/jsonl';
import { Progress } from '../../util/progress';
import { withConfigOptions } from '../options';
import { ProgramsConfigSchema } from '../../programs/config';
import { generateCorpus, type GenerateSummary } from '../../programs/pipeline';
import { rawTracer, sandboxTracer } from '../../trace/tracers';
import type { ClosableTracer } from '../../programs/types';
import { loadCruxEvalJsonl, loadPyDirectory, pySourceDocuments } from '../../programs/loaders';
import { decontaminate, parseFractions, programKeys, splitRecords, SPLITS } from '../../programs/splits';
import { traceStats } from '../../programs/tracestats';
import { summarizeTraces, type Distribution } from '../../programs/summary';
import { mine } from './programs_mine';

/** `ndbg programs generate|split|decontaminate|stats|pydocs` (docs/programs.md). */
type Args = Record<string, unknown>;

function tracerFor(a: Args, maxEvents: number): ClosableTracer {
  if (a.raw) return rawTracer();
  // The sandbox caps events over the whole trace (the `main` wrapper included): leave room.
  return sandboxTracer(a.workers as number, { maxEvents: maxEvents + 16, timeoutS: a.timeout as number });
}

const tracerOptions = <T>(y: Argv<T>) =>
  y
    .option('workers', { type: 'number', default: Math.max(1, Math.min(4, os.cpus().length)), describe: 'Sandbox workers (parallel programs); the output does not depend on it' })
    .option('timeout', { type: 'number', default: 5, describe: 'Wall-clock seconds per program run in the sandbox' })
    .option('raw', { type: 'boolean', default: false, describe: 'Use the unsandboxed in-process tracer (faster; trusted code only)' })
    .option('quiet', { type: 'boolean', default: false, describe: 'No progress bar' });

async function loadPrograms(file: string, calls?: string) {
  if (calls) return loadPyDirectory(file, calls);
  return loadCruxEvalJsonl(file);
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const dist = (d: Distribution) => `median ${d.median}, mean ${d.mean}, p90 ${d.p90}, max ${d.max}`;

export function formatSummary(s: GenerateSummary): string {
  const t = s.traces;
  const lines = [
    `programs: ${s.accepted} accepted of ${s.candidates} candidates (pass rate ${pct(s.passRate)}); records: ${s.recordsAccepted} of ${s.recordsCandidate} (${pct(s.recordPassRate)})`,
    `rejections: ${Object.entries(s.rejections).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}` +
      (Object.keys(s.recordRejections).length ? ` (records: ${Object.entries(s.recordRejections).map(([k, v]) => `${k} ${v}`).join(', ')})` : ''),
    `call depth (f = 1, max over a program's runs): >= 3 in ${pct(t.programsDepthAtLeast3)} of programs; per run ${dist(t.maxDepth)}; histogram ${JSON.stringify(t.maxDepthHistogram)}`,
    `planned helper-chain depth: ${JSON.stringify(s.plannedDepth)}`,
    `exceptions: ${pct(t.programsWithException)} of programs raise (caught or not); ${pct(t.programsWithErrorRun)} have a run ending in an uncaught exception (${pct(t.endedInError)} of runs)`,
    `recursion: ${pct(t.programsWithRecursion)} of programs (${pct(t.withRecursion)} of runs)`,
    `trace events per run (depth >= 1): ${dist(t.events)}`,
    `distinct skeletons (constants stripped): ${s.uniqueShapes} of ${s.accepted}`,
    `constructs (programs containing it / occurrences):`,
    ...Object.entries(s.constructs).map(([k, v]) => `  ${k.padEnd(16)} ${String(v.programs).padStart(7)} ${String(v.total).padStart(9)}`),
  ];
  return lines.join('\n') + '\n';
}

const generate: CommandModule = {
  command: 'generate',
  describe: 'Generate N synthetic CruxEval-style programs, filter them by running them, and write program records',
  builder: (y: Argv) =>
    tracerOptions(withConfigOptions(y))
      .option('n', { type: 'number', demandOption: true, describe: 'Number of programs to accept' })
      .option('seed', { type: 'number', default: 0, describe: 'Generator seed; same seed and config give the same file' })
      .option('out', { type: 'string', demandOption: true, describe: 'Output JSONL of {id, code, input, output?} records' })
      .option('against', { type: 'string', describe: 'Evaluation set (CruxEval JSONL): reject programs whose normalized AST is in it' })
      .option('summary', { type: 'string', describe: 'Summary JSON (default: <out>.summary.json)' }),
  handler: async (a) => {
    const args = a as Args;
    const n = args.n as number;
    if (!Number.isInteger(n) || n < 1) throw new UserError(`--n ${args.n}: expected a positive integer`);
    const seed = args.seed as number;
    if (!Number.isInteger(seed) || seed < 0) throw new UserError(`--seed ${args.seed}: expected a non-negative integer`);
    const config = loadConfig(ProgramsConfigSchema, { file: args.config as string | undefined, overrides: args.set as string[] });
    const out = args.out as string;
    if (!fs.existsSync(path.dirname(path.resolve(out)))) throw new UserError(`--out ${out}: directory ${path.dirname(out)} does not exist`);
    const against = args.against ? new Set(await programKeys(await loadCruxEvalJsonl(args.against as string))) : undefined;
    const partial = `${out}.partial`;
    const writer = new JsonlWriter(partial, false);
    const tracer = tracerFor(args, config.filter.maxEvents);
    const bar = new Progress('generate', n, process.stderr, args.quiet as boolean);
    const start = Date.now();
    let summary: GenerateSummary;
    try {
      summary = await generateCorpus({
        n,
        seed,
        config,
        tracer: tracer.trace,
        against,
        write: (r) => writer.write(r),
        onProgress: (acc, cand) => bar.tick(acc - bar.count, { candidates: cand }),
      });
    } catch (e) {
      // No partial output on failure (the records so far are not a corpus anyone asked for).
      writer.close();
      fs.rmSync(partial, { force: true });
      throw e;
    } finally {
      await tracer.close();
    }
    writer.close();
    bar.finish();
    fs.renameSync(partial, out);
    const summaryFile = (args.summary as string | undefined) ?? `${out}.summary.json`;
    fs.writeFileSync(summaryFile, JSON.stringify({ config, tracer: tracer.describe, ...summary }, null, 2) + '\n');
    process.stdout.write(formatSummary(summary));
    process.stdout.write(`wrote ${summary.recordsAccepted} records to ${out} and the summary to ${summaryFile} in ${((Date.now() - start) / 1000).toFixed(1)}s (${tracer.describe})\n`);
    if (summary.stopped) throw new UserError(summary.stopped);
  },
};

const split: CommandModule = {
  command: 'split',
  describe: 'Split program records into train/validation/test by program (hash of the normalized AST)',
  builder: (y: Argv) =>
    y
      .option('in', { type: 'string', demandOption: true, describe: 'Program records (CruxEval-format JSONL)' })
      .option('out-dir', { type: 'string', demandOption: true, describe: 'Writes train.jsonl, validation.jsonl, test.jsonl here' })
      .option('fractions', { type: 'string', default: '0.9,0.05,0.05', describe: 'TRAIN,VALIDATION,TEST fractions of programs' })
      .option('salt', { type: 'string', default: '', describe: 'Changes the assignment (same salt = same split)' }),
  handler: async (a) => {
    const args = a as Args;
    const fractions = parseFractions(args.fractions as string);
    const records = await loadCruxEvalJsonl(args.in as string);
    const result = await splitRecords(records, fractions, args.salt as string);
    const dir = args['out-dir'] as string;
    fs.mkdirSync(dir, { recursive: true });
    for (const name of SPLITS) {
      const file = path.join(dir, `${name}.jsonl`);
      fs.writeFileSync(`${file}.partial`, result.records[name].map((r) => JSON.stringify(r) + '\n').join(''));
      fs.renameSync(`${file}.partial`, file);
      process.stdout.write(`${name}: ${result.programs[name]} programs, ${result.records[name].length} records -> ${file}\n`);
    }
  },
};

const decontam: CommandModule = {
  command: 'decontaminate',
  describe: 'Report programs whose normalized AST equals one in an evaluation set (e.g. CruxEval)',
  builder: (y: Argv) =>
    y
      .option('in', { type: 'string', demandOption: true, describe: 'Program records to check (CruxEval-format JSONL)' })
      .option('against', { type: 'string', demandOption: true, describe: 'Evaluation set (CruxEval-format JSONL)' })
      .option('out', { type: 'string', describe: 'Also write the records of the clean programs here' }),
  handler: async (a) => {
    const args = a as Args;
    const records = await loadCruxEvalJsonl(args.in as string);
    const evalSet = await loadCruxEvalJsonl(args.against as string);
    const report = await decontaminate(records, evalSet);
    process.stdout.write(`${report.contaminated.length} of ${report.programs} programs (${report.records} records) match ${args.against}\n`);
    for (const c of report.contaminated.slice(0, 50)) process.stdout.write(`  ${c.ids.join(',')} == ${c.evalIds.join(',')}\n`);
    if (args.out) {
      const bad = new Set(report.contaminated.flatMap((c) => c.ids));
      const w = new JsonlWriter(`${args.out}.partial`, false);
      for (const r of records) if (!bad.has(r.id)) w.write(r);
      w.close();
      fs.renameSync(`${args.out}.partial`, args.out as string);
      process.stdout.write(`wrote ${records.length - bad.size} clean records to ${args.out}\n`);
    }
  },
};

const stats: CommandModule = {
  command: 'stats',
  describe: 'Trace a program corpus and report trace length, call depth, exceptions and recursion (same definitions as generate)',
  builder: (y: Argv) =>
    tracerOptions(y)
      .option('in', { type: 'string', demandOption: true, describe: 'CruxEval-format JSONL, or a directory of .py files with --calls' })
      .option('calls', { type: 'string', describe: 'JSON/JSONL list of entry calls when --in is a directory' })
      .option('max-events', { type: 'number', default: 10000, describe: 'Event cap per run' }),
  handler: async (a) => {
    const args = a as Args;
    const records = await loadPrograms(args.in as string, args.calls as string | undefined);
    const tracer = tracerFor(args, args['max-events'] as number);
    const bar = new Progress('trace', records.length, process.stderr, args.quiet as boolean);
    const all = [];
    try {
      for (let i = 0; i < records.length; i += 256) {
        const traces = await tracer.trace(records.slice(i, i + 256));
        all.push(...traces.map(traceStats));
        bar.tick(traces.length);
      }
    } finally {
      await tracer.close();
    }
    bar.finish();
    const keys = await programKeys(records);
    process.stdout.write(JSON.stringify({ file: args.in, tracer: tracer.describe, ...summarizeTraces(all, keys) }, null, 2) + '\n');
  },
};

const pydocs: CommandModule = {
  command: 'pydocs',
  describe: 'Write the .py files of a directory (e.g. the Python stdlib) as JSONL {id, text} documents for the code mixture',
  builder: (y: Argv) =>
    y
      .option('dir', { type: 'string', demandOption: true, describe: 'Directory to walk, e.g. /usr/lib/python3.11' })
      .option('out', { type: 'string', demandOption: true, describe: 'Output JSONL' })
      .option('max-bytes', { type: 'number', default: 1 << 20, describe: 'Skip files larger than this' }),
  handler: async (a) => {
    const args = a as Args;
    const skipped = { count: 0 };
    if (!fs.existsSync(args.dir as string)) throw new UserError(`--dir ${args.dir}: no such directory`);
    const w = new AtomicJsonlWriter(args.out as string);
    let n = 0;
    try {
      for (const doc of pySourceDocuments(args.dir as string, { maxBytes: args['max-bytes'] as number, skipped })) {
        w.write(doc);
        n++;
      }
      w.commit();
    } catch (e) {
      w.abort();
      throw e;
    }
    process.stdout.write(`wrote ${n} documents to ${args.out} (${skipped.count} skipped: too large or not UTF-8)\n`);
  },
};

export const programsCommand: CommandModule = {
  command: 'programs <command>',
  describe: 'Synthetic programs and program corpora: generate, mine, split, decontaminate, stats, pydocs',
  builder: (y: Argv) => y.command(generate).command(split).command(decontam).command(stats).command(pydocs).command(mine).demandCommand(1),
  handler: () => undefined,
};

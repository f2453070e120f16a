import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { UserError } from '../../util/errors';
import { Progress } from '../../util/progress';
import { loadCruxEvalJsonl } from '../../programs/loaders';
import { directoryFiles, packageFiles, stdlibFiles, type CorpusFile } from '../../programs/mine_corpus';
import { programKeys } from '../../programs/splits';
import { mineToFile, MINE_DEFAULTS } from '../mine_run';

type Args = Record<string, unknown>;

const atLeast = (args: Args, name: string, min: number): number => {
  const v = args[name] as number;
  if (!Number.isInteger(v) || v < min) throw new UserError(`--${name} ${v}: expected ${min ? 'a positive' : 'a non-negative'} integer`);
  return v;
};
const positiveInt = (args: Args, name: string): number => atLeast(args, name, 1);

/** `ndbg programs mine` (docs/programs.md, "Mined programs"). */
export const mine: CommandModule = {
  command: 'mine',
  describe: 'Mine standalone functions from real code (stdlib, installed packages, a directory) and find inputs whose traces differ',
  builder: (y: Argv) =>
    y
      .option('stdlib', { type: 'boolean', default: false, describe: "Mine the standard library of --python (tests and GUI code left out)" })
      .option('packages-dir', { type: 'string', describe: 'A site-packages or `pip install --target` directory: mine the distributions installed there' })
      .option('package', { type: 'array', string: true, describe: 'Only these distributions of --packages-dir (repeatable)' })
      .option('dir', { type: 'array', string: true, describe: 'A directory of Python code to mine (repeatable); provenance names it by its folder name' })
      .option('out', { type: 'string', demandOption: true, describe: 'Output JSONL of program records with a `source` provenance field' })
      .option('against', { type: 'string', describe: 'Evaluation set (CruxEval JSONL): drop functions whose normalized AST is in it' })
      .option('seed', { type: 'number', default: 0, describe: 'Input seed; same seed and corpus give the same file' })
      .option('candidates', { type: 'number', default: MINE_DEFAULTS.candidates, describe: 'Calls proposed per function' })
      .option('redraws', { type: 'number', default: MINE_DEFAULTS.redraws, describe: 'Calls re-drawn per function from calls that failed on their input (a wrong type: the blamed arguments, of the kind the error asks for; a KeyError; too few lines); 0: none' })
      .option('per-function', { type: 'number', default: MINE_DEFAULTS.perFunction, describe: 'Calls kept per function at most (distinct traces)' })
      .option('min-per-function', { type: 'number', default: MINE_DEFAULTS.minPerFunction, describe: 'Drop functions with fewer distinct traced calls' })
      .option('min-lines', { type: 'number', default: MINE_DEFAULTS.minLines, describe: 'Line events a kept call must execute' })
      .option('max-function-lines', { type: 'number', default: MINE_DEFAULTS.maxFunctionLines, describe: 'Longest function mined (lines)' })
      .option('max-code-lines', { type: 'number', default: MINE_DEFAULTS.maxCodeLines, describe: "Longest record code: the function plus what it references" })
      .option('max-events', { type: 'number', default: MINE_DEFAULTS.maxEvents, describe: 'Trace events per call at most' })
      .option('python', { type: 'string', default: 'python3', describe: 'The Python whose standard library --stdlib mines' })
      .option('workers', { type: 'number', default: Math.max(1, Math.min(4, os.cpus().length)), describe: 'Sandbox workers' })
      .option('timeout', { type: 'number', default: MINE_DEFAULTS.timeoutS, describe: 'Wall-clock seconds per call in the sandbox' })
      .option('shared-first-look', { type: 'boolean', default: false, describe: "Run each call's first look in a process shared with other calls: faster on corpora of small calls, but the kept calls then depend on how calls were scheduled (a few in thousands differ between two mines of one seed)" })
      .option('quiet', { type: 'boolean', default: false, describe: 'No progress bar' }),
  handler: async (a) => {
    const args = a as Args;
    const files: CorpusFile[] = [];
    if (args.stdlib) files.push(...stdlibFiles(args.python as string));
    if (args['packages-dir']) files.push(...packageFiles(args['packages-dir'] as string, args.package as string[] | undefined));
    for (const d of (args.dir as string[] | undefined) ?? []) files.push(...directoryFiles(d, { package: path.basename(path.resolve(d)), version: null, license: null }));
    if (files.length === 0) throw new UserError('programs mine: nothing to mine (give --stdlib, --packages-dir or --dir)');
    const out = args.out as string;
    if (!fs.existsSync(path.dirname(path.resolve(out)))) throw new UserError(`--out ${out}: directory ${path.dirname(out)} does not exist`);
    const against = args.against ? new Set(await programKeys(await loadCruxEvalJsonl(args.against as string))) : undefined;
    const bar = new Progress('mine functions', undefined, process.stderr, args.quiet as boolean);
    let shown = 0;
    const { summary, tracer, seconds } = await mineToFile(
      files,
      {
        seed: args.seed as number,
        candidates: positiveInt(args, 'candidates'),
        redraws: atLeast(args, 'redraws', 0),
        perFunction: positiveInt(args, 'per-function'),
        minPerFunction: positiveInt(args, 'min-per-function'),
        minLines: positiveInt(args, 'min-lines'),
        maxFunctionLines: positiveInt(args, 'max-function-lines'),
        maxCodeLines: positiveInt(args, 'max-code-lines'),
        maxEvents: positiveInt(args, 'max-events'),
        timeoutS: args.timeout as number,
        against,
        againstFile: (args.against as string | undefined) ?? null,
        python: args.python as string,
        workers: args.workers as number,
        sharedFirstLook: args['shared-first-look'] as boolean,
        onProgress: (done, total, kept) => {
          bar.tick(done - shown, { of: total, kept });
          shown = done;
        },
      },
      out,
    );
    bar.finish();
    process.stdout.write(
      `mined ${summary.functionsKept} functions (${summary.recordsKept} calls) of ${summary.functionsExtracted} extracted from ${summary.functionsSeen} module-level functions in ${summary.modules} modules, ${seconds.toFixed(1)}s (${tracer})\n` +
        `  per package: ${Object.entries(summary.perPackage).map(([k, v]) => `${k} ${v}`).join(', ')}\n` +
        `  extraction (${summary.extractionSeconds.toFixed(1)}s, peak ${summary.extractionPeakMiB} MiB): ${Object.entries(summary.extraction).map(([k, v]) => `${k} ${v}`).join(', ')}\n` +
        `  calls: ${summary.callsTried} tried (${summary.callsRedrawn} re-drawn from wrong-type failures, ${summary.keptFromRedraws} of them kept); rejected ${Object.entries(summary.callRejections).map(([k, v]) => `${k} ${v}`).join(', ')}\n` +
        `  functions dropped: ${Object.entries(summary.functionRejections).map(([k, v]) => `${k} ${v}`).join(', ')}\n` +
        `wrote ${out} and ${out}.manifest.json\n`,
    );
  },
};

import * as fs from 'fs';
import type { Argv, CommandModule } from 'yargs';
import { buildForwardTree, buildInverseTree } from '../../debugger';
import { commandsFor, compareRun, DEFAULT_SCRIPT_OPTIONS, pdbJob, repoPdbJob, runDifferential } from '../../debugger/differential';
import { runPdbHarness, runRepoPdbHarness } from '../../debugger/pdb';
import { explore, exploreJson, formatExplore, parseActions } from '../../debugger/explore';
import { loadCruxEvalJsonl } from '../../programs/loaders';
import { traceInProcess } from '../../trace/inprocess';
import { checkPythonSyntax } from '../../trace/syntax';
import { replaceFileAtomic } from '../../util/fsync';
import type { TraceRecord } from '../../trace/types';
import { UserError } from '../../util/errors';
import { readJsonl } from '../../util/jsonl';
import { Progress } from '../../util/progress';

/**
 * `ndbg oracle`: walk a trace with debugger actions as pdb would (docs/debugger.md), and
 * `ndbg oracle check`: the differential test of the oracle against real pdb.
 */
export const oracleCommand: CommandModule = {
  command: 'oracle',
  describe: 'Explore a trace with debugger actions (the state-tree oracle); `oracle check` compares it with real pdb',
  builder: (y: Argv) =>
    y
      .command({
        command: '$0',
        describe: 'Print the states that a list of debugger actions visits in one trace',
        builder: (yy: Argv) =>
          yy
            .option('trace', { type: 'string', describe: 'trace JSONL (from `ndbg trace`)' })
            .option('id', { type: 'string', describe: 'program id in --trace (default: the only/first record)' })
            .option('program', { type: 'string', describe: 'a Python file to trace in-process instead of --trace (trusted code only)' })
            .option('call', { type: 'string', describe: "the entry call for --program, e.g. 'f(3)'" })
            .option('actions', {
              type: 'string',
              demandOption: true,
              describe: 'comma-separated actions: step_into, step_over, step_return, continue (or s, n, r, c), breakpoint:SRC; inverse: inv_step_into, inv_step_over, inv_step_call',
            })
            .option('inverse', { type: 'boolean', default: false, describe: "walk the inverse tree of the entry function's invocation" })
            .option('json', { type: 'boolean', default: false, describe: 'print one JSON array with an entry per action' })
            .option('pdb', { type: 'boolean', default: false, describe: 'also drive real pdb with the same actions and say whether it stops at the same states' })
            .conflicts('trace', 'program')
            .example('$0 oracle --trace traces.jsonl --id sample_3 --actions "step_into,step_over,breakpoint:    return x"', '')
            .example("$0 oracle --program prog.py --call 'f(3)' --actions s,s,s,r --json", ''),
        handler: async (argv) => {
          const trace = await loadOne(argv);
          const tree = argv.inverse ? buildInverseTree(trace) : buildForwardTree(trace);
          const actions = parseActions(argv.actions as string);
          const result = explore(tree, actions);
          process.stdout.write(argv.json ? exploreJson(result) + '\n' : formatExplore(result, actions));
          if (argv.pdb) {
            if (argv.inverse) throw new UserError('--pdb: pdb has no inverse actions');
            const scripts = [commandsFor(tree, actions, trace.scope?.repo)];
            const [res] = trace.level === 'repository' ? await runRepoPdbHarness([repoPdbJob(trace, 30, scripts)]) : await runPdbHarness([pdbJob(trace, true, 30, scripts)]);
            const c = compareRun(trace.id, 0, tree, actions, res.runs[0]);
            const line = c.mismatch
              ? `pdb: disagrees at step ${c.mismatch.step} (${c.mismatch.verdict}): pdb stopped at ${JSON.stringify(c.mismatch.actual)}`
              : `pdb: agrees at all ${c.compared} stops`;
            process.stderr.write(line + '\n');
          }
        },
      })
      .command({
        command: 'check',
        describe: 'Run seeded random action scripts through the oracle and through real pdb; report where they agree',
        builder: (yy: Argv) =>
          yy
            .option('trace', { type: 'string', describe: 'trace JSONL to check (every record)' })
            .option('programs', { type: 'string', describe: 'program JSONL ({id, code, input}) to trace in-process first (trusted code only)' })
            .option('scripts', { type: 'number', default: DEFAULT_SCRIPT_OPTIONS.scripts, describe: 'scripts per program' })
            .option('max-actions', { type: 'number', default: DEFAULT_SCRIPT_OPTIONS.maxActions, describe: 'actions per script at most' })
            .option('max-breakpoints', { type: 'number', default: DEFAULT_SCRIPT_OPTIONS.maxBreakpoints, describe: 'breakpoints per script at most' })
            .option('seed', { type: 'number', default: 0 })
            .option('count', { type: 'boolean', default: false, describe: 'counting mode for every program: also match trace indices and locals order' })
            .option('workers', { type: 'number', default: 1, describe: 'pdb harness processes' })
            .option('timeout', { type: 'number', default: 20, describe: 'seconds per pdb run' })
            .option('limit', { type: 'number', describe: 'check only the first N programs' })
            .option('report', { type: 'string', describe: 'write the full report (with every disagreement) as JSON here' })
            .option('quiet', { type: 'boolean', default: false, describe: 'no progress bar' })
            .conflicts('trace', 'programs')
            .example('$0 oracle check --programs ../shared/data/cruxeval.jsonl --workers 2 --report pdb-check.json', ''),
        handler: async (argv) => {
          for (const k of ['scripts', 'max-actions', 'workers', 'timeout'] as const) {
            const v = argv[k] as number;
            if (!(Number.isFinite(v) && v > 0)) throw new UserError(`--${k} must be a positive number, got ${v}`);
          }
          let traces: TraceRecord[];
          if (argv.trace) traces = await readAll<TraceRecord>(argv.trace as string);
          else if (argv.programs) traces = traceInProcess(await loadCruxEvalJsonl(argv.programs as string));
          else throw new UserError('oracle check: give --trace FILE or --programs FILE');
          if (argv.limit !== undefined) traces = traces.slice(0, argv.limit as number);
          const progress = argv.quiet ? undefined : new Progress('pdb check', traces.length);
          const report = await runDifferential(traces, {
            scripts: argv.scripts as number,
            maxActions: argv['max-actions'] as number,
            maxBreakpoints: argv['max-breakpoints'] as number,
            unreachedProb: DEFAULT_SCRIPT_OPTIONS.unreachedProb,
            seed: argv.seed as number,
            count: argv.count as boolean,
            workers: argv.workers as number,
            timeout: argv.timeout as number,
            onProgress: () => progress?.tick(),
          });
          progress?.finish();
          if (argv.report) replaceFileAtomic(argv.report as string, JSON.stringify(report, null, 1) + '\n');
          const { mismatches, ...summary } = report;
          process.stdout.write(JSON.stringify({ ...summary, firstMismatches: mismatches.slice(0, 5) }, null, 1) + '\n');
          if (report.byVerdict.other > 0) throw new UserError(`${report.byVerdict.other} scripts disagree with pdb outside the documented classes`, 1);
        },
      })
      .demandCommand(0),
  handler: () => undefined,
};

async function readAll<T>(file: string): Promise<T[]> {
  if (!fs.existsSync(file)) throw new UserError(`${file}: no such file`);
  const out: T[] = [];
  for await (const l of readJsonl<T>(file)) {
    if (l.error) throw new UserError(l.error);
    out.push(l.value as T);
  }
  return out;
}

async function loadOne(argv: Record<string, unknown>): Promise<TraceRecord> {
  if (argv.program !== undefined) {
    const file = argv.program as string;
    if (!fs.existsSync(file)) throw new UserError(`--program ${file}: no such file`);
    const call = argv.call as string | undefined;
    const m = call === undefined ? null : /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\((.*)\)\s*$/s.exec(call);
    if (!m) throw new UserError(`--call: give the entry call like 'f(3)' (got ${JSON.stringify(call)})`);
    const code = fs.readFileSync(file, 'utf8');
    checkPythonSyntax(file, code, call);
    let traces: TraceRecord[];
    try {
      traces = traceInProcess([{ id: file, code, input: m[2], entry: m[1] }]);
    } catch (e) {
      throw new UserError(`--program ${file}: in-process tracing failed (a program that prints to stdout needs \`ndbg trace\` and --trace): ${(e as Error).message.split('\n')[0]}`);
    }
    return traces[0];
  }
  if (argv.trace === undefined) throw new UserError('oracle: give --trace FILE (with --id) or --program FILE --call CALL');
  const file = argv.trace as string;
  if (!fs.existsSync(file)) throw new UserError(`--trace ${file}: no such file`);
  const id = argv.id as string | undefined;
  for await (const l of readJsonl<TraceRecord>(file)) {
    if (l.error) throw new UserError(l.error);
    const t = l.value as TraceRecord;
    if (id === undefined || t.id === id) {
      if (!Array.isArray(t?.events)) throw new UserError(`${file}:${l.lineNumber}: not a trace record (no events)`);
      return t;
    }
  }
  throw new UserError(`--trace ${file}: no record with id ${JSON.stringify(id)}`);
}

import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { BACKENDS, BackendChoice } from '../../backend/backend';
import { NaiveBaseline, RuleBaseline } from '../../eval/baseline';
import { writeNextStateSamples } from '../../eval/samples';
import { CompleterPredictor } from '../../eval/completer';
import { copyProbeOf, DEFAULT_COPY_PROBE, formatCopyProbe, modelLogProbs } from '../../eval/copy_probe';
import { formatSrcTokenAccuracy, readNdlTexts, srcTokenAccuracy } from '../../eval/src_tokens';
import { runCruxEval } from '../../eval/cruxeval_run';
import { DEFAULT_HORIZON, runHorizon } from '../../eval/horizon';
import { loadCompleter, loadModelCompleter, loadPrograms, resultsDir, writeJson, type CompleterSpec } from '../../eval/load';
import { DEFAULT_BATCH_SIZE, DEFAULT_BEAMS, DEFAULT_MAX_NEW_TOKENS } from '../../eval/model_completer';
import { DEFAULT_WALK_STEPS } from '../../eval/jump_walk';
import { tracePrograms } from '../../trace';
import { evaluateNextState, formatTables, nextStateReport } from '../../eval/next_state';
import { ALL_ACTIONS, makeTasks } from '../../eval/tasks';
import type { ActionKind } from '../../ndl/tokens';
import { assertCheckpointDir } from '../../model/checkpoint';
import { writeEvalScalars } from '../../train/tensorboard';
import { UserError } from '../../util/errors';
import { readTraces } from '../../ndl/run';
import type { TraceRecord } from '../../trace/types';

/** `ndbg eval next-state|cruxeval|horizon` (docs/eval.md). */
type Args = Record<string, unknown>;

function modelOptions<T>(y: Argv<T>) {
  return y
    .option('checkpoint', { type: 'string', describe: 'Checkpoint directory of a trained model' })
    .option('oracle', { type: 'boolean', default: false, describe: 'Use the true next states instead of a model (validates the harness: scores 100%)' })
    .option('backend', { type: 'string', choices: BACKENDS as unknown as string[], default: 'auto', describe: 'tfjs backend' })
    .option('max-new-tokens', { type: 'number', default: DEFAULT_MAX_NEW_TOKENS, describe: 'Longest predicted frame, in tokens' })
    .option('src-constraint', { type: 'boolean', default: true, describe: 'SRC fields may only spell lines of the program (constrained decoding); --no-src-constraint decodes them freely' })
    .option('frame-grammar', { type: 'boolean', default: true, describe: 'The answer may only be text that parses as one frame (grammar-constrained decoding); --no-frame-grammar decodes it freely' })
    .option('walk-steps', { type: 'number', default: DEFAULT_WALK_STEPS, describe: 'A breakpoint is answered by walking the model\'s own single steps to it, up to N steps (docs/eval.md, "walked breakpoints"); 0 answers it in one shot' })
    .option('beams', { type: 'number', default: DEFAULT_BEAMS, describe: 'Beam search: the likeliest frame over N beams; 1 decodes greedily' })
    .option('batch-size', { type: 'number', default: DEFAULT_BATCH_SIZE, describe: 'Prompts decoded together (1: one at a time; a GPU takes more)' })
    .option('out', { type: 'string', describe: 'Results directory (default: RUN/eval for a checkpoint in RUN/checkpoints/)' })
    .option('limit', { type: 'number', describe: 'Only the first N programs' })
    .option('workers', { type: 'number', default: 1, describe: 'Sandbox workers for tracing and checking' })
    .option('decode-workers', { type: 'number', default: 1, describe: 'Processes that decode a model\'s answers side by side on a CPU backend, with the same answers (e.g. the number of cores)' })
    .option('seed', { type: 'number', default: 0, describe: 'Seed of task sampling and of sampled decoding' })
    .option('quiet', { type: 'boolean', default: false, describe: 'No progress output' });
}

/** Every argument checked before any program is traced or model loaded. */
function checkArgs(a: Args): void {
  if (!a.checkpoint && !a.oracle) throw new UserError('give --checkpoint DIR (a trained model) or --oracle (the true next states)');
  if (a.checkpoint && a.oracle) throw new UserError('give --checkpoint or --oracle, not both');
  if (a.checkpoint) assertCheckpointDir(a.checkpoint as string);
  const walk = a['walk-steps'];
  if (walk !== undefined && !(Number.isInteger(walk) && (walk as number) >= 0)) throw new UserError(`--walk-steps must be a non-negative integer, got ${String(walk)}`);
  for (const k of ['workers', 'decode-workers', 'max-new-tokens', 'beams', 'batch-size', 'limit', 'per-program', 'samples', 'max-prefix-frames']) {
    const v = a[k];
    if (v !== undefined && !(Number.isInteger(v) && (v as number) >= (k === 'samples' ? 0 : 1))) throw new UserError(`--${k} must be a positive integer, got ${String(v)}`);
  }
  if (a.actions !== undefined) parseActions(a.actions as string);
  for (const f of (a.fractions as number[] | undefined) ?? []) if (!(f >= 0 && f <= 1)) throw new UserError(`--fractions: ${f} is not in [0, 1]`);
}

/** The completer the eval options describe (model or oracle, decoding). */
function completerSpec(a: Args): CompleterSpec {
  return {
    checkpoint: a.checkpoint as string | undefined,
    oracle: a.oracle as boolean,
    backend: a.backend as BackendChoice,
    maxNewTokens: a['max-new-tokens'] as number,
    constrainSrc: a['src-constraint'] as boolean,
    constrainFrame: a['frame-grammar'] as boolean,
    walkSteps: a['walk-steps'] as number,
    beams: a.beams as number,
    batchSize: a['batch-size'] as number,
    decodeWorkers: a['decode-workers'] as number,
  };
}

async function setup(a: Args) {
  checkArgs(a);
  const programs = await loadPrograms(a.programs as string, a.limit as number | undefined);
  const traces = await tracePrograms(programs, a.workers as number, a.quiet as boolean);
  const completer = await loadCompleter(
    completerSpec(a),
    traces,
  );
  const out = resultsDir(a.out as string | undefined, a.checkpoint as string | undefined);
  return { programs, traces, completer, out };
}

/** Scoped repository-level traces (`ndbg ndl scope`), optionally the first `limit`. */
async function loadRepoLevelTraces(file: string, limit?: number): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const t of readTraces(file)) {
    if (t.level !== 'repository') throw new UserError(`--repo-traces ${file}: trace ${t.id} is not repository-level (make the file with \`ndbg ndl scope\`)`);
    out.push(t);
    if (limit && out.length >= limit) break;
  }
  return out;
}

function parseActions(spec: string): ActionKind[] {
  if (spec === 'all') return [...ALL_ACTIONS];
  const kinds = spec.split(',').map((s) => s.trim()) as ActionKind[];
  for (const k of kinds) if (!ALL_ACTIONS.includes(k)) throw new UserError(`--actions: unknown action "${k}"; expected ${ALL_ACTIONS.join(', ')} or all`);
  return kinds;
}

const nextState: CommandModule = {
  command: 'next-state',
  describe: 'Next-state exact match per action and component (EVT, SRC, ARG, LOCALS), beside the rule baseline and the naive one, with 95% intervals over programs',
  builder: (y: Argv) =>
    modelOptions(y)
      .option('programs', { type: 'string', describe: 'Held-out programs (CruxEval-style JSONL): the function-level set' })
      .option('repo-traces', { type: 'string', describe: 'Scoped traces of held-out repositories (`ndbg ndl scope --holdout-out`): the repository-level set, reported separately' })
      .check((a) => {
        if (!a.programs && !a['repo-traces']) throw new UserError('give --programs (function-level) and/or --repo-traces (repository-level)');
        return true;
      })
      .option('per-program', { type: 'number', default: 2, describe: 'Tasks per program and action' })
      .option('max-prefix-frames', { type: 'number', describe: "Most frames walked before the action under test (default: the whole trajectory; prompts must still fit the model's context)" })
      .option('actions', { type: 'string', default: 'all', describe: 'Comma-separated action kinds, or all' }),
  handler: async (argv) => {
    const a = argv as Args;
    checkArgs(a);
    // Function-level and repository-level held-out sets are scored and written apart
    // (next_state.json, next_state_repo.json): they measure different things.
    const repoTraces = a['repo-traces'] ? await loadRepoLevelTraces(a['repo-traces'] as string, a.limit as number | undefined) : [];
    const programs = a.programs ? await loadPrograms(a.programs as string, a.limit as number | undefined) : [];
    const traces = programs.length > 0 ? await tracePrograms(programs, a.workers as number, a.quiet as boolean) : [];
    const completer = await loadCompleter(
      completerSpec(a),
      [...traces, ...repoTraces],
    );
    const out = resultsDir(a.out as string | undefined, a.checkpoint as string | undefined);
    const sets = [
      { traces, name: 'next_state', title: 'function-level (held-out programs)' },
      { traces: repoTraces, name: 'next_state_repo', title: 'repository-level (held-out repositories)' },
    ].filter((x) => x.traces.length > 0);
    for (const set of sets) {
      const { tasks, didNotFit } = makeTasks(set.traces, parseActions(a.actions as string), {
        seed: a.seed as number,
        perProgram: a['per-program'] as number,
        maxPrefixFrames: a['max-prefix-frames'] as number | undefined,
        budget: completer.budget,
      });
      const result = await evaluateNextState(tasks, [new CompleterPredictor(completer), new RuleBaseline(), new NaiveBaseline()], { quiet: a.quiet as boolean, didNotFit });
      const file = path.join(out, `${set.name}.json`);
      // Per-task results beside the JSON, so the errors can be read (docs/eval.md).
      writeNextStateSamples(path.join(out, `${set.name}_samples.jsonl`), result);
      let report = nextStateReport(result, completer.name, { programs: set.traces.length, tasks: tasks.length });
      if (set.name === 'next_state_repo') {
        const repos = new Set(set.traces.map((t) => t.scope?.repo_id));
        report = { ...report, title: 'Next-state accuracy (exact match, held-out repositories)', level: 'repository', repositories: [...repos].sort() };
      }
      writeJson(file, report);
      writeEvalScalars(a.checkpoint as string | undefined, set.name, report);
      process.stdout.write(`${sets.length > 1 ? `${set.title}:\n` : ''}${formatTables(result.tables)}\nwritten to ${file} and ${set.name}_samples.jsonl\n`);
    }
  },
};

const cruxeval: CommandModule = {
  command: 'cruxeval',
  describe: 'CruxEval output prediction (step_return, breakpoint) and input prediction (inv_step_call), scored in the sandbox',
  builder: (y: Argv) =>
    modelOptions(y)
      .option('data', { type: 'string', demandOption: true, describe: 'CruxEval JSONL ({id, code, input, output})' })
      .option('samples', { type: 'number', default: 0, describe: 'Samples per task for pass@k (0: pass@1 of the unsampled answer only, decoded as --beams says)' })
      .option('k', { type: 'number', array: true, default: [1, 5], describe: 'k values for pass@k' })
      .option('temperature', { type: 'number', default: 0.8, describe: 'Sampling temperature for pass@k' })
      .option('top-p', { type: 'number', default: 0.95, describe: 'Nucleus mass for pass@k' }),
  handler: async (argv) => {
    const a: Args = { ...(argv as Args), programs: (argv as Args).data };
    const { programs, completer, out } = await setup(a);
    const resultsFile = path.join(out, 'cruxeval_samples.jsonl');
    const summary = await runCruxEval(programs, completer, {
      samples: a.samples as number,
      ks: a.k as number[],
      temperature: a.temperature as number,
      topP: a['top-p'] as number,
      seed: a.seed as number,
      resultsFile,
      workers: a.workers as number,
      quiet: a.quiet as boolean,
    });
    const file = path.join(out, 'cruxeval.json');
    writeJson(file, {
      title: 'CruxEval',
      predictor: completer.name,
      decoding: completer.decoding ?? 'greedy',
      pass1_greedy: Object.fromEntries(Object.entries(summary.byTask).map(([k, v]) => [k, v.greedyPass1])),
      ...summary,
    });
    writeEvalScalars(a.checkpoint as string | undefined, 'cruxeval', summary);
    for (const [kind, row] of Object.entries(summary.byTask)) {
      const ks = Object.entries(row.passAtK).map(([k, v]) => `${k} ${(100 * v).toFixed(1)}`).join('  ');
      process.stdout.write(`${kind.padEnd(22)} n=${row.tasks}  did_not_fit=${row.didNotFit}  pass@1 (${completer.decoding ?? 'greedy'}) ${(100 * row.greedyPass1).toFixed(1)}  ${ks}\n`);
    }
    process.stdout.write(`per-sample results: ${resultsFile}\nwritten to ${file}\n`);
  },
};

const horizon: CommandModule = {
  command: 'horizon',
  describe: 'Accuracy as a function of the fraction of skipped states in a breakpoint jump',
  builder: (y: Argv) =>
    modelOptions(y)
      .option('programs', { type: 'string', demandOption: true, describe: 'Held-out programs (CruxEval-style JSONL)' })
      .option('fractions', { type: 'number', array: true, default: DEFAULT_HORIZON.fractions, describe: 'Fractions of skipped states' })
      .option('samples', { type: 'number', default: DEFAULT_HORIZON.samples, describe: 'Runs per task and fraction' })
      .option('min-skipped', { type: 'number', default: DEFAULT_HORIZON.minSkipped, describe: 'Least number of states a task jump skips' })
      .option('temperature', { type: 'number', default: DEFAULT_HORIZON.temperature, describe: 'Temperature of the intermediate steps' })
      .option('top-p', { type: 'number', default: DEFAULT_HORIZON.topP, describe: 'Nucleus mass of the intermediate steps' }),
  handler: async (argv) => {
    const a = argv as Args;
    const { traces, completer, out } = await setup(a);
    for (const f of a.fractions as number[]) if (!(f >= 0 && f <= 1)) throw new UserError(`--fractions: ${f} is not in [0, 1]`);
    const result = await runHorizon(traces, completer, {
      ...DEFAULT_HORIZON,
      seed: a.seed as number,
      fractions: a.fractions as number[],
      samples: a.samples as number,
      minSkipped: a['min-skipped'] as number,
      temperature: a.temperature as number,
      topP: a['top-p'] as number,
      quiet: a.quiet as boolean,
    });
    const file = path.join(out, 'horizon.json');
    writeJson(file, {
      title: 'Horizon: accuracy vs fraction of skipped states',
      predictor: completer.name,
      tasks: result.tasks,
      full_match_by_skipped_fraction: Object.fromEntries(result.rows.map((r) => [String(r.fraction), r.full])),
      rows: result.rows,
    });
    writeEvalScalars(a.checkpoint as string | undefined, 'horizon', { full_match_by_skipped_fraction: Object.fromEntries(result.rows.map((r) => [String(r.fraction), r.full])) });
    for (const r of result.rows) process.stdout.write(`skipped ${(100 * r.fraction).toFixed(0).padStart(3)}%  n=${r.n}  did_not_fit=${r.didNotFit}  full ${(100 * r.full).toFixed(1)}  src ${(100 * r.src).toFixed(1)}\n`);
    process.stdout.write(`written to ${file}\n`);
  },
};

const copy: CommandModule = {
  command: 'copy',
  describe: 'Copy probe: random sequences written twice; does the model predict the second copy (induction heads)?',
  builder: (y: Argv) =>
    y
      .option('checkpoint', { type: 'string', demandOption: true, describe: 'Checkpoint directory of a trained model' })
      .option('backend', { type: 'string', choices: BACKENDS as unknown as string[], default: 'auto', describe: 'tfjs backend' })
      .option('sequences', { type: 'number', default: DEFAULT_COPY_PROBE.sequences, describe: 'Random sequences' })
      .option('length', { type: 'number', default: DEFAULT_COPY_PROBE.length, describe: "Pieces per copy (capped by the model's context)" })
      .option('seed', { type: 'number', default: DEFAULT_COPY_PROBE.seed, describe: 'Seed of the sequences' })
      .option('ndl', { type: 'string', describe: 'Held-out NDL documents (JSONL from `ndbg ndl`): also score SRC tokens teacher-forced' })
      .option('documents', { type: 'number', default: 64, describe: 'With --ndl: the first N documents' })
      .option('out', { type: 'string', describe: 'Results directory (default: RUN/eval for a checkpoint in RUN/checkpoints/)' }),
  handler: async (argv) => {
    const a = argv as Args;
    assertCheckpointDir(a.checkpoint as string);
    for (const k of ['sequences', 'length']) if (!(Number.isInteger(a[k]) && (a[k] as number) >= 2)) throw new UserError(`--${k} must be an integer ≥ 2, got ${String(a[k])}`);
    if (!(Number.isInteger(a.documents) && (a.documents as number) >= 1)) throw new UserError(`--documents must be a positive integer, got ${String(a.documents)}`);
    const texts = a.ndl === undefined ? undefined : await readNdlTexts(a.ndl as string, a.documents as number);
    const completer = await loadModelCompleter({ checkpoint: a.checkpoint as string, backend: a.backend as BackendChoice });
    const result = copyProbeOf(completer.model, completer.tokenizer, { seed: a.seed as number, sequences: a.sequences as number, length: a.length as number }, completer.budget.seqLen);
    const srcTokens = texts && srcTokenAccuracy(modelLogProbs(completer.model), completer.tokenizer, texts, completer.budget);
    const file = path.join(resultsDir(a.out as string | undefined, a.checkpoint as string), 'copy_probe.json');
    writeJson(file, { title: 'Copy probe (induction)', ...result, ...(srcTokens && { srcTokens: { file: a.ndl, ...srcTokens } }) });
    process.stdout.write(`${formatCopyProbe(result)}\n${srcTokens ? formatSrcTokenAccuracy(srcTokens) + '\n' : ''}written to ${file}\n`);
  },
};

export const evalCommand: CommandModule = {
  command: 'eval',
  describe: 'Evaluate a neural debugger: next-state, cruxeval, horizon, copy',
  builder: (y: Argv) => y.command(nextState).command(cruxeval).command(horizon).command(copy).demandCommand(1),
  handler: () => undefined,
};

/**
 * One timed next-state section for bench/eval.ts, in a process of its own so that two builds'
 * modules (this tree's and another commit's `dist/`) never share one TensorFlow runtime:
 * `node eval_child.js BUILD CHECKPOINT TRACES SAMPLES_OUT` loads BUILD/eval/*, scores the model
 * on every action of TRACES with two decode workers (as the quickstart's stage 7), writes the
 * per-task samples and prints `{"seconds":…,"tasks":…}`.
 */
import * as fs from 'fs';
import * as path from 'path';

async function main(): Promise<void> {
  const [build, checkpoint, traces, samplesOut] = process.argv.slice(2);
  const load = (m: string) => require(path.join(build, 'eval', m));
  const { loadModelCompleter } = load('load');
  const { CompleterPredictor } = load('completer');
  const { evaluateNextState } = load('next_state');
  const { writeNextStateSamples } = load('samples');
  const { ALL_ACTIONS, makeTasks } = load('tasks');
  const records = fs.readFileSync(traces, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  const completer = await loadModelCompleter({ checkpoint, backend: 'auto', decodeWorkers: 2 });
  const { tasks } = makeTasks(records, ALL_ACTIONS, { seed: 0, perProgram: 1, budget: completer.budget });
  const start = Date.now();
  const result = await evaluateNextState(tasks, [new CompleterPredictor(completer)], { quiet: true });
  const seconds = (Date.now() - start) / 1000;
  writeNextStateSamples(samplesOut, result);
  completer.close();
  process.stdout.write(`${JSON.stringify({ seconds, tasks: tasks.length })}\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${(e as Error).stack}\n`);
    process.exit(1);
  },
);

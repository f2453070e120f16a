/**
 * Runs the CruxEval tasks (src/eval/cruxeval.ts) with a completer and scores every sample in
 * the sandbox. Per-sample results go to a JSONL file as they are produced (a crash keeps what
 * was scored); the summary holds pass@1 of the unsampled answer (greedy or beam search, as the completer
 * decodes at temperature 0) and pass@k (n samples) per task kind.
 */
import { checkAssertion, SandboxPool, traceBatch } from '../trace';
import type { ProgramRecord, TraceRecord } from '../trace/types';
import { JsonlWriter } from '../util/jsonl';
import { Progress } from '../util/progress';
import { readPrediction, TextCompleter } from './completer';
import { candidateFor, CRUX_TASKS, CruxTask, cruxTasks } from './cruxeval';
import { meanPassAtK } from './passk';
import { fitsBudget } from './tasks';

export interface CruxEvalOptions {
  /** Samples per task for pass@k (0: greedy only). */
  samples: number;
  ks: number[];
  temperature: number;
  topP: number;
  seed: number;
  /** Per-sample JSONL output. */
  resultsFile?: string;
  workers?: number;
  quiet?: boolean;
}

export interface CruxSampleResult {
  id: string;
  task: string;
  program: string;
  /** -1 for the greedy sample. */
  sample: number;
  temperature: number;
  continuation: string;
  answer?: string;
  passed: boolean;
  error?: string;
}

export interface CruxSummaryRow {
  tasks: number;
  /** Tasks whose prompt and answer do not fit the model's context: not scored. */
  didNotFit: number;
  /** pass@1 of the temperature-0 answer: greedy, or the completer's beam search (the name predates beams). */
  greedyPass1: number;
  passAtK: Record<string, number>;
}

export interface CruxEvalSummary {
  programs: number;
  traced: number;
  untraceable: string[];
  byTask: Record<string, CruxSummaryRow>;
}

async function score(task: CruxTask, continuation: string, pool: SandboxPool): Promise<Omit<CruxSampleResult, 'sample' | 'temperature'>> {
  const base = { id: task.id, task: task.kind, program: task.program.id, continuation };
  const prediction = readPrediction(task.prefix, continuation);
  if (prediction.error !== undefined) return { ...base, passed: false, error: `parse: ${prediction.error}` };
  const candidate = candidateFor(task, prediction.frame);
  if (!candidate.check) return { ...base, passed: false, error: candidate.error };
  const r = await checkAssertion(task.program.code, candidate.check, { pool });
  return { ...base, answer: candidate.answer, passed: r.passed, error: r.passed ? undefined : r.error ?? r.status };
}

export async function runCruxEval(
  programs: ProgramRecord[],
  completer: TextCompleter,
  options: CruxEvalOptions,
): Promise<CruxEvalSummary> {
  const pool = new SandboxPool(options.workers ?? 1, {});
  const writer = options.resultsFile ? new JsonlWriter(options.resultsFile, false) : undefined;
  try {
    const traces: TraceRecord[] = [];
    for await (const t of traceBatch(programs, { pool })) traces.push(t);
    const tasks: CruxTask[] = [];
    const untraceable: string[] = [];
    const didNotFit: Record<string, number> = {};
    programs.forEach((p, i) => {
      const ts = cruxTasks(p, traces[i]);
      if (ts.length === 0) untraceable.push(p.id);
      for (const t of ts) {
        if (fitsBudget(t.prefix, t.truth, completer.budget)) tasks.push(t);
        else didNotFit[t.kind] = (didNotFit[t.kind] ?? 0) + 1;
      }
    });
    const counts = new Map<string, Array<{ n: number; c: number }>>();
    const greedy = new Map<string, number[]>();
    const progress = new Progress('cruxeval', tasks.length, process.stderr, options.quiet);
    // Greedy answers first, as batches when the completer decodes them so (a model).
    const greedyTexts = completer.completeFrames
      ? await completer.completeFrames(tasks.map((t) => t.prefix), { temperature: 0 })
      : undefined;
    for (const [i, task] of tasks.entries()) {
      const g = await score(task, greedyTexts ? greedyTexts[i] : await completer.completeFrame(task.prefix, { temperature: 0 }), pool);
      writer?.write({ ...g, sample: -1, temperature: 0 });
      if (!greedy.has(task.kind)) greedy.set(task.kind, []);
      (greedy.get(task.kind) as number[]).push(g.passed ? 1 : 0);
      let c = 0;
      for (let s = 0; s < options.samples; s++) {
        const text = await completer.completeFrame(task.prefix, {
          temperature: options.temperature,
          topP: options.topP,
          seed: options.seed * 1_000_003 + s,
        });
        const r = await score(task, text, pool);
        writer?.write({ ...r, sample: s, temperature: options.temperature });
        if (r.passed) c++;
      }
      if (!counts.has(task.kind)) counts.set(task.kind, []);
      (counts.get(task.kind) as Array<{ n: number; c: number }>).push({ n: options.samples, c });
      progress.tick(1);
    }
    progress.finish();
    const byTask: Record<string, CruxSummaryRow> = {};
    for (const kind of CRUX_TASKS) {
      const g = greedy.get(kind) ?? [];
      const passAtK: Record<string, number> = {};
      if (options.samples > 0) {
        for (const k of options.ks) if (k <= options.samples) passAtK[`pass@${k}`] = meanPassAtK(counts.get(kind) ?? [], k);
      }
      byTask[kind] = { tasks: g.length, didNotFit: didNotFit[kind] ?? 0, greedyPass1: g.length ? g.reduce((a, b) => a + b, 0) / g.length : 0, passAtK };
    }
    return { programs: programs.length, traced: traces.filter((t) => t.status === 'normal').length, untraceable, byTask };
  } finally {
    writer?.close();
    await pool.close();
  }
}

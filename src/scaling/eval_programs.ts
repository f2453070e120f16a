import { createHash } from 'crypto';
import * as fs from 'fs';
import { loadPrograms } from '../eval/load';
import { readTraces } from '../ndl/run';
import { tracePrograms } from '../trace';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { readJsonl } from '../util/jsonl';

/**
 * The held-out set of a sweep's next-state eval (grid `next_state_eval.programs`): program
 * records are traced in the sandbox once per sweep process; a traces file is read as it is, so
 * a machine without the sandbox's Python can still evaluate.
 */
export async function loadEvalTraces(file: string, o: { limit?: number; workers: number; quiet?: boolean }): Promise<TraceRecord[]> {
  const where = `next_state_eval.programs ${file}`;
  const traces = (await isTracesFile(file)) ? await readAll(file, o.limit) : await tracePrograms(await loadPrograms(file, o.limit), o.workers, o.quiet);
  if (traces.length === 0) throw new UserError(`${where}: no programs`);
  // The CLI scores function- and repository-level sets apart; one figure per cell must not mix them.
  const levels = new Set(traces.map((t) => t.level ?? 'function'));
  if (levels.size > 1) throw new UserError(`${where}: mixes function-level and repository-level traces; evaluate one kind per sweep`);
  return traces;
}

/** Identifies the held-out set by content, so an eval stays valid when the sweep moves to another machine's paths. */
export function fileSha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** A traces file's records carry `events`; program records never do. */
async function isTracesFile(file: string): Promise<boolean> {
  for await (const line of readJsonl<Record<string, unknown>>(file, { invalid: 'yield' })) {
    return !line.error && Array.isArray(line.value?.events);
  }
  return false;
}

async function readAll(file: string, limit?: number): Promise<TraceRecord[]> {
  const out: TraceRecord[] = [];
  for await (const t of readTraces(file)) {
    out.push(t);
    if (limit && out.length >= limit) break;
  }
  return out;
}

import type { FilterConfig } from './config';
import type { CodeFacts } from './normalize';
import { traceFingerprint, traceStats, type TraceStats } from './tracestats';
import type { ProgramRecord, ProgramRun, Tracer } from './types';

/**
 * The record filters, in order (the first failing one is the reason):
 *   syntax_error          the code does not parse
 *   too_short/too_long/too_many_lines   code length bounds
 *   forbidden_import      imports a module outside the allow-list
 *   nondeterministic_builtin   mentions id(), hash(), open(), eval() ... (see normalize.py)
 *   step_budget           the run did not finish within `maxEvents` trace events (status never)
 *   limit:<what>          the sandbox stopped it (timeout, memory, ...)
 *   unplanned_error:<Exc> (generated programs) ended in an exception the generator did not plan
 *   nondeterministic      a second run, with the heap layout perturbed, gave another trace
 * Program-level filters (duplicate, contaminated) are applied by the caller.
 */
export interface RecordOutcome {
  id: string;
  ok: boolean;
  reason?: string;
  stats?: TraceStats;
  /** The first run, when `filterRecords` was asked to keep runs (`keepRuns`); passing records only. */
  run?: ProgramRun;
}

/**
 * Allocations appended to the module for the second run so object addresses (ids, default
 * hashes, set order of objects) differ from the first; f's line numbers are unchanged. Tuples,
 * not `object()`: the name `object` keeps a program out of the sandbox's shared child
 * (src/trace/purity.py), so every second run paid a fresh fork, most of the program stage's
 * system time; 48-byte tuples are about the size of small class instances, so they move those.
 */
export const HEAP_PERTURBATION = '\n\n_ndbg_heap_pad = [(i,) for i in range(1237)] + [[] for _ in range(311)]\n';

/** The length bounds alone: they need no parse, so the generator applies them first. */
export function lengthReason(code: string, cfg: FilterConfig): string | undefined {
  if (code.length < cfg.minChars) return 'too_short';
  if (code.length > cfg.maxChars) return 'too_long';
  if (code.split('\n').length > cfg.maxLines) return 'too_many_lines';
  return undefined;
}

export function staticReason(code: string, facts: CodeFacts, cfg: FilterConfig): string | undefined {
  if (!facts.ok) return 'syntax_error';
  const length = lengthReason(code, cfg);
  if (length) return length;
  if ((facts.imports ?? []).some((m) => !cfg.allowImports.includes(m))) return 'forbidden_import';
  if ((facts.risky ?? []).length > 0) return 'nondeterministic_builtin';
  return undefined;
}

/**
 * Runs the filters over records. `facts[i]` are the code facts of `records[i]`;
 * `plannedErrors(i)`, when given, lists the `Type: message` errors record i may end with.
 */
export async function filterRecords(
  records: ProgramRecord[],
  facts: CodeFacts[],
  tracer: Tracer,
  cfg: FilterConfig,
  plannedErrors?: (i: number) => string[],
  opts: { keepRuns?: boolean } = {},
): Promise<RecordOutcome[]> {
  const out: RecordOutcome[] = records.map((r, i) => {
    const reason = staticReason(r.code, facts[i], cfg);
    return reason ? { id: r.id, ok: false, reason } : { id: r.id, ok: true };
  });
  const live = () => records.map((_, i) => i).filter((i) => out[i].ok);

  const first = live();
  const traces = await tracer(first.map((i) => records[i]));
  const fingerprints = new Map<number, string>();
  first.forEach((i, j) => {
    const rec = traces[j];
    const stats = traceStats(rec);
    out[i].stats = stats;
    const reason = dynamicReason(rec.status, stats, cfg, plannedErrors?.(i));
    if (reason) {
      out[i].ok = false;
      out[i].reason = reason;
    } else {
      if (cfg.checkDeterminism) fingerprints.set(i, traceFingerprint(rec));
      if (opts.keepRuns) out[i].run = rec;
    }
  });

  if (cfg.checkDeterminism) {
    const second = live();
    const same = await sameTraceAgain(second.map((i) => records[i]), second.map((i) => fingerprints.get(i) ?? ''), tracer);
    second.forEach((i, j) => {
      if (!same[j]) {
        out[i].ok = false;
        out[i].reason = 'nondeterministic';
        delete out[i].run;
      }
    });
  }
  return out;
}

/**
 * The determinism check alone: whether each record, run again with the heap perturbed, gives
 * the trace whose fingerprint is given (`traceFingerprint` of its first run). For callers that
 * filter first runs on their own terms and check only the survivors.
 */
export async function sameTraceAgain(records: ProgramRecord[], fingerprints: string[], tracer: Tracer): Promise<boolean[]> {
  const again = await tracer(records.map((r) => ({ ...r, code: r.code.replace(/\n*$/, '') + HEAP_PERTURBATION })));
  return again.map((run, j) => traceFingerprint(run) === fingerprints[j]);
}

function dynamicReason(status: string, stats: TraceStats, cfg: FilterConfig, planned?: string[]): string | undefined {
  if (stats.limit && stats.limit !== 'steps') return `limit:${stats.limit}`;
  if (status === 'never' || stats.events > cfg.maxEvents) return 'step_budget';
  if (status === 'error' && planned && cfg.rejectUnplannedErrors && !planned.includes(stats.error ?? '')) {
    return `unplanned_error:${(stats.error ?? 'unknown').split(':')[0]}`;
  }
  return undefined;
}

/**
 * `ndbg ndl scope`: repository trace JSONL (`ndbg trace-repo`) → scoped trace JSONL, one record
 * per sampled entry invocation (repo_scope.ts). The output is ordinary trace JSONL for
 * `ndbg ndl`, `ndbg ndl check` and `ndbg oracle check`.
 */
import { z } from 'zod';
import type { RepoTraceRecord } from '../trace/repo';
import { Rng } from '../util/rng';
import { AtomicJsonlWriter } from '../util/jsonl';
import { EntrySampling, scopedTraces } from './repo_scope';
import { readValidated } from './run';
import type { TokenCounter } from './sampler';

/** The fields of a repository trace record this stage reads. */
const repoTraceSchema = z
  .object({
    id: z.string().min(1),
    kind: z.literal('repo'),
    repo_id: z.string(),
    repo: z.string(),
    entry: z.string(),
    path: z.array(z.string()),
    status: z.enum(['normal', 'error', 'never']),
    events: z.array(z.object({ event: z.enum(['call', 'line', 'return', 'exception']), depth: z.number().int().min(0), invocation: z.number().int().min(0), line: z.number().int(), func: z.string() }).passthrough()),
    files: z.record(z.string()),
    blocks: z.record(z.array(z.tuple([z.number(), z.number(), z.number(), z.array(z.number())])).nullable()),
    bounds: z.object({ repr_cap: z.number().int() }).passthrough(),
  })
  .passthrough();

/** Streams the repository trace records of a JSONL file; the first bad line is a UserError. */
export function readRepoTraces(file: string): AsyncGenerator<RepoTraceRecord> {
  return readValidated<RepoTraceRecord>(file, repoTraceSchema, 'a repository trace record (from `ndbg trace-repo`)');
}

/**
 * Which repositories are held out for evaluation: those named, or else a seeded fraction of
 * them (a hash of the id, so the choice does not depend on which others are in the corpus).
 * Whole repositories, never single trajectories: the model is evaluated on code it never saw.
 */
export interface Holdout {
  fraction: number;
  seed: number;
  repos?: string[];
}

export function isHeldOutRepository(repoId: string, h: Holdout): boolean {
  if (h.repos && h.repos.length > 0) return h.repos.includes(repoId);
  return h.fraction > 0 && Rng.from(h.seed, 'repo-holdout', repoId).next() < h.fraction;
}

export interface ScopeSummary {
  repoTraces: number;
  scoped: number;
  /** Scoped traces written to the held-out file, and the held-out repositories. */
  heldOut: number;
  heldOutRepos: string[];
  /** Functions called in some scope whose source did not fit the context budget. */
  omittedBlocks: number;
  byRepo: Record<string, number>;
}

export async function scopeRepoTraces(opts: {
  traces: string;
  out: string;
  seed: number;
  sampling: EntrySampling;
  countTokens?: TokenCounter;
  /** With `out`: the scoped traces of held-out repositories go there instead of to --out. */
  holdout?: Holdout & { out: string };
}): Promise<ScopeSummary> {
  const writer = new AtomicJsonlWriter(opts.out);
  const heldWriter = opts.holdout ? new AtomicJsonlWriter(opts.holdout.out) : undefined;
  const summary: ScopeSummary = { repoTraces: 0, scoped: 0, heldOut: 0, heldOutRepos: [], omittedBlocks: 0, byRepo: {} };
  try {
    for await (const rec of readRepoTraces(opts.traces)) {
      summary.repoTraces++;
      const held = heldWriter !== undefined && isHeldOutRepository(rec.repo_id, opts.holdout as Holdout);
      if (held && !summary.heldOutRepos.includes(rec.repo_id)) summary.heldOutRepos.push(rec.repo_id);
      for (const t of scopedTraces(rec, opts.seed, opts.sampling, opts.countTokens)) {
        (held ? (heldWriter as AtomicJsonlWriter) : writer).write(t);
        if (held) summary.heldOut++;
        summary.scoped++;
        summary.omittedBlocks += t.scope?.omitted ?? 0;
        summary.byRepo[rec.repo_id] = (summary.byRepo[rec.repo_id] ?? 0) + 1;
      }
    }
    writer.commit();
    heldWriter?.commit();
  } catch (e) {
    writer.abort();
    heldWriter?.abort();
    throw e;
  }
  return summary;
}

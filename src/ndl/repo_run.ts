/**
 * `ndbg ndl scope`: repository trace JSONL (`ndbg trace-repo`) → scoped trace JSONL, one record
 * per sampled entry invocation (repo_scope.ts). The output is ordinary trace JSONL for
 * `ndbg ndl`, `ndbg ndl check` and `ndbg oracle check`.
 */
import * as fs from 'fs';
import { z } from 'zod';
import type { RepoTraceRecord } from '../trace/repo';
import { UserError } from '../util/errors';
import { AtomicJsonlWriter, invalidLine, readJsonl } from '../util/jsonl';
import { EntrySampling, scopedTraces } from './repo_scope';
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
export async function* readRepoTraces(file: string): AsyncGenerator<RepoTraceRecord> {
  if (!fs.existsSync(file)) throw new UserError(`--traces ${file}: no such file`);
  for await (const line of readJsonl<unknown>(file)) {
    const r = repoTraceSchema.safeParse(line.value);
    if (!r.success) {
      const issue = r.error.issues[0];
      invalidLine(`${file}:${line.lineNumber}: not a repository trace record (from \`ndbg trace-repo\`): ${issue.path.join('.') || '(root)'}: ${issue.message}`);
      continue;
    }
    yield r.data as unknown as RepoTraceRecord;
  }
}

export interface ScopeSummary {
  repoTraces: number;
  scoped: number;
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
}): Promise<ScopeSummary> {
  const writer = new AtomicJsonlWriter(opts.out);
  const summary: ScopeSummary = { repoTraces: 0, scoped: 0, omittedBlocks: 0, byRepo: {} };
  try {
    for await (const rec of readRepoTraces(opts.traces)) {
      summary.repoTraces++;
      for (const t of scopedTraces(rec, opts.seed, opts.sampling, opts.countTokens)) {
        writer.write(t);
        summary.scoped++;
        summary.omittedBlocks += t.scope?.omitted ?? 0;
        summary.byRepo[rec.repo_id] = (summary.byRepo[rec.repo_id] ?? 0) + 1;
      }
    }
    writer.commit();
  } catch (e) {
    writer.abort();
    throw e;
  }
  return summary;
}

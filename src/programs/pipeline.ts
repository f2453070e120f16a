import type { ProgramsConfig } from './config';
import { filterRecords } from './filters';
import { generateProgram, type GeneratedProgram } from './generator';
import type { Construct } from './ir';
import { codeFacts } from './normalize';
import { programKey } from './splits';
import { histogramOf, summarizeConstructs, summarizeTraces, type TraceSummary } from './summary';
import type { TraceStats } from './tracestats';
import type { ProgramRecord, Tracer } from './types';

/**
 * `ndbg programs generate`: candidates gen-<seed>-0, gen-<seed>-1, ... are generated, filtered
 * and accepted in index order until `n` programs are accepted, so the output depends only on
 * (n, seed, config) and not on batch sizes or worker counts. A program is accepted when at
 * least one of its inputs passes the record filters and its normalized AST is new (not a
 * duplicate of an earlier accepted program, not in the `against` evaluation set).
 */
export interface GenerateOptions {
  n: number;
  seed: number;
  config: ProgramsConfig;
  tracer: Tracer;
  /** Program keys (splits.programKeys) of an evaluation set: matching candidates are rejected. */
  against?: Set<string>;
  batchSize?: number;
  /** Give up after this many candidates (default 2n + 100). */
  maxCandidates?: number;
  /** Called with each accepted record, in order. */
  write: (rec: ProgramRecord) => void;
  onProgress?: (accepted: number, candidates: number) => void;
}

export interface GenerateSummary {
  seed: number;
  requested: number;
  candidates: number;
  accepted: number;
  /** accepted / candidates. */
  passRate: number;
  recordsCandidate: number;
  recordsAccepted: number;
  recordPassRate: number;
  /** Program-level rejection reasons (a program's reason is its first record's). */
  rejections: Record<string, number>;
  /** Record-level rejection reasons over all candidate records. */
  recordRejections: Record<string, number>;
  constructs: Record<string, { programs: number; total: number }>;
  plannedDepth: Record<string, number>;
  traces: TraceSummary;
  /** Distinct skeletons (normalized AST with constants stripped) among accepted programs. */
  uniqueShapes: number;
}

export async function generateCorpus(opts: GenerateOptions): Promise<GenerateSummary> {
  const { n, seed, config } = opts;
  const maxCandidates = opts.maxCandidates ?? 2 * n + 100;
  const batchSize = opts.batchSize ?? 256;
  const seen = new Set<string>();
  const shapes = new Set<string>();
  const rejections: Record<string, number> = {};
  const recordRejections: Record<string, number> = {};
  const hists: Array<Partial<Record<Construct, number>>> = [];
  const planned: number[] = [];
  const stats: TraceStats[] = [];
  const groups: string[] = [];
  let accepted = 0;
  let candidates = 0;
  let recordsCandidate = 0;
  let next = 0;
  const bump = (h: Record<string, number>, k: string) => (h[k] = (h[k] ?? 0) + 1);

  while (accepted < n && next < maxCandidates) {
    const size = Math.min(batchSize, maxCandidates - next, Math.max(8, Math.ceil((n - accepted) * 1.05)));
    const progs: GeneratedProgram[] = [];
    for (let i = 0; i < size; i++) progs.push(generateProgram(seed, next + i, config.generator));
    next += size;
    const facts = await codeFacts(progs.map((p) => p.code));
    const records: ProgramRecord[] = [];
    const owner: number[] = [];
    progs.forEach((p, pi) =>
      p.inputs.forEach((input, k) => {
        records.push(p.entry === 'f' ? { id: `${p.id}-${k}`, code: p.code, input } : { id: `${p.id}-${k}`, code: p.code, input, entry: p.entry });
        owner.push(pi);
      }),
    );
    const outcomes = await filterRecords(
      records,
      owner.map((pi) => facts[pi]),
      opts.tracer,
      config.filter,
      (i) => progs[owner[i]].plannedErrors,
    );
    for (let pi = 0; pi < progs.length && accepted < n; pi++) {
      const p = progs[pi];
      candidates++;
      const mine = outcomes.map((o, i) => ({ o, rec: records[i] })).filter((_, i) => owner[i] === pi);
      recordsCandidate += mine.length;
      for (const { o } of mine) if (!o.ok) bump(recordRejections, o.reason!);
      const ok = mine.filter(({ o }) => o.ok);
      const ast = programKey(p.code, facts[pi]);
      let reason: string | undefined;
      if (ok.length === 0) reason = mine[0]?.o.reason ?? 'no_inputs';
      else if (seen.has(ast)) reason = 'duplicate';
      else if (opts.against?.has(ast)) reason = 'contaminated';
      if (reason) {
        bump(rejections, reason);
        continue;
      }
      seen.add(ast);
      shapes.add(facts[pi].shape ?? '');
      accepted++;
      hists.push(p.histogram);
      planned.push(p.plannedDepth);
      for (const { o, rec } of ok) {
        const out: ProgramRecord = { id: rec.id, code: rec.code, input: rec.input };
        if (rec.entry !== undefined) out.entry = rec.entry;
        if (o.stats?.output !== undefined) out.output = o.stats.output;
        opts.write(out);
        stats.push(o.stats!);
        groups.push(p.id);
      }
    }
    opts.onProgress?.(accepted, candidates);
  }
  const recordsAccepted = stats.length;
  return {
    seed,
    requested: n,
    candidates,
    accepted,
    passRate: candidates ? Math.round((accepted / candidates) * 10000) / 10000 : 0,
    recordsCandidate,
    recordsAccepted,
    recordPassRate: recordsCandidate ? Math.round((recordsAccepted / recordsCandidate) * 10000) / 10000 : 0,
    rejections,
    recordRejections,
    constructs: summarizeConstructs(hists),
    plannedDepth: histogramOf(planned),
    traces: summarizeTraces(stats, groups),
    uniqueShapes: shapes.size,
  };
}

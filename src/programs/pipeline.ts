import type { ProgramsConfig } from './config';
import { filterRecords, lengthReason, type RecordOutcome } from './filters';
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
 * (n, seed, config) and not on batch sizes or worker counts; a corpus of n programs is the first
 * n programs of any larger one of the same seed. A program is accepted when at
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
  /** Most candidates generated at once (default 1024); the output does not depend on it. */
  batchSize?: number;
  /** Give up after this many candidates (default CANDIDATE_MULTIPLE × n + 1000). */
  maxCandidates?: number;
  /** Called with each accepted record, in order, and its program's key (splits.programKey), so
   * a caller can split the corpus without parsing every program again. */
  write: (rec: ProgramRecord, key: string) => void;
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
  /** Set when fewer than `requested` were accepted: why generation stopped (shortfallMessage). */
  stopped?: string;
}

/**
 * The default candidate cap is this multiple of n: the quickstart's filters accept about a third
 * of the candidates, so a cap of 20n leaves room for acceptance to fall to 5% (a stricter config,
 * duplicates piling up in a large corpus) before generation gives up.
 */
export const CANDIDATE_MULTIPLE = 20;

/**
 * Candidates judged before the acceptance rate so far is trusted to project the total: from
 * there a corpus that would need more than the cap stops at once instead of running into it.
 */
const PROJECT_AFTER = 2000;

/** What to loosen when a filter rejects most candidates (the shortfall message names it). */
const REMEDIES: Record<string, string> = {
  too_long: 'raise filter.maxChars or shorten the programs (generator.statements, callDepthWeights)',
  too_short: 'lower filter.minChars',
  too_many_lines: 'raise filter.maxLines',
  step_budget: 'raise filter.maxEvents or make the programs loop less',
  duplicate: 'the generator config allows too few distinct programs: widen it (statements, params, inputs)',
  nondeterministic: 'set filter.checkDeterminism false only for trusted experiments',
  contaminated: 'most candidates equal a program of --against',
};

/** Why a corpus came out short: the counts and the filter that rejected most candidates. */
export function shortfallMessage(s: Pick<GenerateSummary, 'requested' | 'accepted' | 'candidates' | 'rejections'>, projected = false): string {
  const [reason, count] = Object.entries(s.rejections).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0] ?? ['none', 0];
  const rate = `${((100 * s.accepted) / Math.max(s.candidates, 1)).toFixed(1)}%`;
  const when = projected ? `at this rate ${s.requested} would need more than the candidate cap` : 'the candidate cap was reached';
  const remedy = REMEDIES[reason.split(':')[0]] ?? (reason.startsWith('unplanned_error') ? 'a generator bug: the programs raise errors it did not plan' : 'loosen that filter');
  return `only ${s.accepted} of ${s.requested} programs were accepted from ${s.candidates} candidates (${rate}; ${when}); the filter rejecting most is ${reason} (${count} candidates): ${remedy}, or ask for fewer programs`;
}

/** One candidate program as judged: a rejection reason, or its passing records and its key. */
interface Judged {
  program: GeneratedProgram;
  records: ProgramRecord[];
  outcomes: RecordOutcome[];
  reason?: string;
  key?: string;
  shape?: string;
}

/**
 * Runs the filters over a batch of candidates. The length bounds come first and need no parse:
 * in the quickstart's config they reject about two thirds of the candidates, which then skip the
 * parse and the two sandboxed runs (the parse of those long programs was most of the stage's
 * time). Which programs pass is unchanged; only a too-long program that also fails to parse is
 * counted as too_long rather than syntax_error.
 */
async function judgeBatch(progs: GeneratedProgram[], opts: GenerateOptions): Promise<Judged[]> {
  const cfg = opts.config.filter;
  const judged: Judged[] = progs.map((p) => {
    const records = p.inputs.map((input, k): ProgramRecord => (p.entry === 'f' ? { id: `${p.id}-${k}`, code: p.code, input } : { id: `${p.id}-${k}`, code: p.code, input, entry: p.entry }));
    const reason = records.length === 0 ? 'no_inputs' : lengthReason(p.code, cfg);
    return { program: p, records, outcomes: reason ? records.map((r) => ({ id: r.id, ok: false, reason })) : [], reason };
  });
  const live = judged.filter((j) => !j.reason);
  const facts = await codeFacts(live.map((j) => j.program.code));
  const owner = live.flatMap((j, li) => j.records.map(() => li));
  const outcomes = await filterRecords(
    live.flatMap((j) => j.records),
    owner.map((li) => facts[li]),
    opts.tracer,
    cfg,
    (i) => live[owner[i]].program.plannedErrors,
  );
  owner.forEach((li, i) => live[li].outcomes.push(outcomes[i]));
  live.forEach((j, li) => {
    j.key = programKey(j.program.code, facts[li]);
    j.shape = facts[li].shape ?? '';
    if (!j.outcomes.some((o) => o.ok)) j.reason = j.outcomes[0].reason;
  });
  return judged;
}

/** Candidates to generate next: enough for the programs still missing at the acceptance rate so far. */
function nextBatchSize(need: number, accepted: number, candidates: number, room: number, most: number): number {
  const rate = candidates > 0 ? Math.max(accepted / candidates, 0.05) : 1;
  return Math.min(most, room, Math.max(8, Math.ceil((need / rate) * 1.05)));
}

/** The running tallies of a corpus being generated (accepted in candidate index order). */
class Corpus {
  readonly seen = new Set<string>();
  readonly shapes = new Set<string>();
  readonly rejections: Record<string, number> = {};
  readonly recordRejections: Record<string, number> = {};
  readonly hists: Array<Partial<Record<Construct, number>>> = [];
  readonly planned: number[] = [];
  readonly stats: TraceStats[] = [];
  readonly groups: string[] = [];
  accepted = 0;
  candidates = 0;
  recordsCandidate = 0;

  /** Counts one candidate and writes its passing records when it is accepted. */
  take(j: Judged, opts: GenerateOptions): void {
    this.candidates++;
    this.recordsCandidate += j.outcomes.length;
    for (const o of j.outcomes) if (!o.ok) bump(this.recordRejections, o.reason!);
    let reason = j.reason;
    if (!reason && this.seen.has(j.key!)) reason = 'duplicate';
    else if (!reason && opts.against?.has(j.key!)) reason = 'contaminated';
    if (reason) {
      bump(this.rejections, reason);
      return;
    }
    this.seen.add(j.key!);
    this.shapes.add(j.shape!);
    this.accepted++;
    this.hists.push(j.program.histogram);
    this.planned.push(j.program.plannedDepth);
    j.outcomes.forEach((o, i) => {
      if (!o.ok) return;
      const rec = j.records[i];
      const out: ProgramRecord = { id: rec.id, code: rec.code, input: rec.input };
      if (rec.entry !== undefined) out.entry = rec.entry;
      if (o.stats?.output !== undefined) out.output = o.stats.output;
      opts.write(out, j.key!);
      this.stats.push(o.stats!);
      this.groups.push(j.program.id);
    });
  }

  summary(seed: number, requested: number): GenerateSummary {
    const recordsAccepted = this.stats.length;
    const ratio = (a: number, b: number) => (b ? Math.round((a / b) * 10000) / 10000 : 0);
    return {
      seed,
      requested,
      candidates: this.candidates,
      accepted: this.accepted,
      passRate: ratio(this.accepted, this.candidates),
      recordsCandidate: this.recordsCandidate,
      recordsAccepted,
      recordPassRate: ratio(recordsAccepted, this.recordsCandidate),
      rejections: this.rejections,
      recordRejections: this.recordRejections,
      constructs: summarizeConstructs(this.hists),
      plannedDepth: histogramOf(this.planned),
      traces: summarizeTraces(this.stats, this.groups),
      uniqueShapes: this.shapes.size,
    };
  }
}

function bump(h: Record<string, number>, k: string): void {
  h[k] = (h[k] ?? 0) + 1;
}

/**
 * Generates until n programs are accepted, or the candidate cap is reached, or (after
 * PROJECT_AFTER candidates) the acceptance rate so far says the cap would be reached; then the
 * summary's `stopped` says why, naming the filter that rejected most. Stopping depends only on
 * (n, seed, config, caps), so it is deterministic too.
 */
export async function generateCorpus(opts: GenerateOptions): Promise<GenerateSummary> {
  const { n, seed, config } = opts;
  const cap = opts.maxCandidates ?? CANDIDATE_MULTIPLE * n + 1000;
  const corpus = new Corpus();
  let next = 0;
  let projected = false;
  while (corpus.accepted < n && next < cap && !projected) {
    const size = nextBatchSize(n - corpus.accepted, corpus.accepted, corpus.candidates, cap - next, opts.batchSize ?? 1024);
    const progs: GeneratedProgram[] = [];
    for (let i = 0; i < size; i++) progs.push(generateProgram(seed, next + i, config.generator));
    next += size;
    for (const j of await judgeBatch(progs, opts)) {
      if (corpus.accepted >= n) break;
      corpus.take(j, opts);
    }
    opts.onProgress?.(corpus.accepted, corpus.candidates);
    const c = corpus.candidates;
    projected = corpus.accepted < n && c >= PROJECT_AFTER && (corpus.accepted === 0 || (n * c) / corpus.accepted > cap);
  }
  const summary = corpus.summary(seed, n);
  if (corpus.accepted < n) summary.stopped = shortfallMessage(summary, projected);
  return summary;
}

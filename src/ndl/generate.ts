/**
 * Documents for one trace record: K sampled trajectories split between forward and inverse
 * by the configured shares, or the canonical all-step pair. Deterministic per (seed, trace id):
 * every random stream is `Rng.from(seed, id, ...)`, whatever order traces are processed in.
 */
import { buildForwardTree, buildInverseTree } from '../debugger';
import type { Action, Direction, StateTree } from '../debugger';
import type { TraceRecord } from '../trace/types';
import { Rng } from '../util/rng';
import type { SamplerConfig } from './config';
import { formatDocument } from './format';
import { approxTokenCount, sampleDocument, SampleOptions } from './sampler';
import type { Trajectory } from './types';

/** One line of `ndbg ndl`'s output JSONL. */
export interface NdlRecord {
  /** The program (trace) id. */
  id: string;
  /** Position of this document among the program's documents. */
  doc: number;
  direction: Direction;
  /** The action of every frame that has one, in order. */
  actions: Action[];
  /** The tree node each frame shows (index into the forward or inverse tree). */
  nodes: number[];
  end: Trajectory['end'];
  text: string;
  /** Repository-level documents only: the repository's id, the key of the data stage's split
   * (src/data/sources.ts), so a repository is held out whole. */
  repo?: string;
}

export function toRecord(id: string, doc: number, trajectory: Trajectory, text: string, repo?: string): NdlRecord {
  const rec: NdlRecord = {
    id,
    doc,
    direction: trajectory.direction,
    actions: trajectory.steps.flatMap((s) => (s.action ? [s.action] : [])),
    nodes: trajectory.steps.map((s) => s.node),
    end: trajectory.end,
    text,
  };
  if (repo !== undefined) rec.repo = repo;
  return rec;
}

/** The tree for a direction, or undefined when the trace has nothing to show in it. */
export function treeFor(trace: TraceRecord, direction: Direction): StateTree | undefined {
  const tree = direction === 'forward' ? buildForwardTree(trace) : buildInverseTree(trace);
  return tree.nodes.length > 0 ? tree : undefined;
}

/** How many of `k` documents are forward: k·share rounded down, plus one with the leftover probability. */
export function forwardCount(trace: TraceRecord, seed: number, k: number, config: SamplerConfig): number {
  const p = config.forwardShare / (config.forwardShare + config.inverseShare);
  const exact = k * p;
  const base = Math.floor(exact);
  return base + (Rng.from(seed, trace.id, 'ndl-direction').bool(exact - base) ? 1 : 0);
}

/**
 * `k` sampled documents for one trace, forward ones first. A direction whose tree is empty
 * (e.g. nothing traced) is skipped, so fewer than k may come back; see `skipped`.
 */
export function sampleDocuments(
  trace: TraceRecord,
  seed: number,
  k: number,
  config: SamplerConfig,
  options: SampleOptions = {},
): { records: NdlRecord[]; skipped: number; tooLong: number } {
  const nForward = forwardCount(trace, seed, k, config);
  const records: NdlRecord[] = [];
  let skipped = 0;
  // Documents whose program context and first frame alone exceed the token budget: a row could
  // not hold them whole, so they are not written (and counted) rather than cut.
  let tooLong = 0;
  const count = options.countTokens ?? approxTokenCount;
  const trees: Partial<Record<Direction, StateTree | undefined>> = {};
  for (let d = 0; d < k; d++) {
    const direction = d < nForward ? 'forward' : 'inverse';
    if (!(direction in trees)) trees[direction] = treeFor(trace, direction);
    const tree = trees[direction];
    if (!tree) {
      skipped++;
      continue;
    }
    const rng = Rng.from(seed, trace.id, 'ndl', direction, d);
    const { trajectory, text } = sampleDocument(trace, tree, rng, config, options);
    if (config.maxTokens != null && count(text) > config.maxTokens) {
      tooLong++;
      continue;
    }
    records.push(toRecord(trace.id, d, trajectory, text, trace.scope?.repo_id));
  }
  return { records, skipped, tooLong };
}

/** The trajectory that takes `kind` from every node until EXIT (the canonical documents). */
export function allStepTrajectory(tree: StateTree, kind: 'step_into' | 'inv_step_into'): Trajectory {
  return {
    direction: tree.direction,
    steps: tree.nodes.map((_, node) => ({ node, action: { kind } })),
    end: 'exit',
  };
}

/** The forward document under all step_into and the inverse one under all inv_step_into. */
export function allStepDocuments(trace: TraceRecord): NdlRecord[] {
  const out: NdlRecord[] = [];
  for (const [doc, kind] of [[0, 'step_into'], [1, 'inv_step_into']] as const) {
    const tree = treeFor(trace, kind === 'step_into' ? 'forward' : 'inverse');
    if (!tree) continue;
    const trajectory = allStepTrajectory(tree, kind);
    out.push(toRecord(trace.id, doc, trajectory, formatDocument(trace, tree, trajectory), trace.scope?.repo_id));
  }
  return out;
}

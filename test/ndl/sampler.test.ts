import { availableActions, buildForwardTree, buildInverseTree } from '../../src/debugger';
import type { StateTree } from '../../src/debugger/types';
import { defaultSamplerConfig, samplerConfigSchema, SamplerConfig } from '../../src/ndl/config';
import { sampleDocuments } from '../../src/ndl/generate';
import { actionDistribution, approxTokenCount, entryCallIndex, sampleDocument } from '../../src/ndl/sampler';
import type { ActionKind } from '../../src/ndl/tokens';
import { emptyStats, verifyDocument } from '../../src/ndl/verify';
import type { TraceRecord } from '../../src/trace/types';
import { Rng } from '../../src/util/rng';
import { fixturePrograms, traceAll } from './helpers';

const traces = traceAll(fixturePrograms());
const trees = new Map<string, { forward: StateTree; inverse: StateTree }>(
  traces.map((t) => [t.id, { forward: buildForwardTree(t), inverse: buildInverseTree(t) }]),
);

const CONFIGS: Array<[string, SamplerConfig]> = [
  ['default', defaultSamplerConfig()],
  ['few frames', samplerConfigSchema.parse({ maxFrames: 3 })],
  ['token budget', samplerConfigSchema.parse({ maxTokens: 400 })],
  ['policy from main', samplerConfigSchema.parse({ enterEntry: false })],
  ['breakpoint-heavy', samplerConfigSchema.parse({ forwardMixture: [{ weight: 1, probs: { breakpoint: 0.6, step_return: 0.3, step_over: 0.1 } }], unreachedBreakpointProb: 0.3 })],
];

describe('sampler', () => {
  it('covers the fixture programs: calls, exceptions, step limit', () => {
    expect(traces.map((t) => t.status)).toEqual(expect.arrayContaining(['normal', 'error', 'never']));
  });

  it.each(CONFIGS)('round trip and oracle agreement for every sampled trajectory (%s config)', (_name, config) => {
    const stats = emptyStats();
    for (const trace of traces) {
      const { records } = sampleDocuments(trace, 11, 12, config);
      expect(records.length).toBe(12);
      for (const r of records) {
        const tree = trees.get(trace.id)![r.direction];
        let a = 0;
        const steps = r.nodes.map((node, k) => ({ node, action: k < r.actions.length ? r.actions[a++] : undefined }));
        const problems = verifyDocument(tree, { direction: r.direction, steps, end: r.end }, r.text, stats);
        expect({ id: r.id, doc: r.doc, problems }).toEqual({ id: r.id, doc: r.doc, problems: [] });
        expect(r.nodes.length).toBeLessThanOrEqual(config.maxFrames);
        if (config.maxTokens !== null && r.nodes.length > 1) expect(approxTokenCount(r.text)).toBeLessThanOrEqual(config.maxTokens);
      }
    }
    expect(stats.frames).toBeGreaterThan(200);
    // Forward full-locals reconstruction is exact except where the program deleted a variable.
    expect(stats.exactWithDeleted).toBeLessThan(stats.exactFrames * 0.05 + 1);
  });

  it('is deterministic per (seed, program id) and differs across seeds', () => {
    const config = defaultSamplerConfig();
    const t = traces.find((x) => x.id === 'caught') as TraceRecord;
    const a = sampleDocuments(t, 5, 4, config).records;
    const b = sampleDocuments(t, 5, 4, config).records;
    const c = sampleDocuments(t, 6, 4, config).records;
    expect(b).toEqual(a);
    expect(c.map((r) => r.text)).not.toEqual(a.map((r) => r.text));
  });

  it('splits documents between forward and inverse by the configured shares', () => {
    const count = (config: SamplerConfig) => {
      let fwd = 0;
      let all = 0;
      for (let seed = 0; seed < 40; seed++) {
        for (const r of sampleDocuments(traces[0], seed, 3, config).records) {
          all++;
          if (r.direction === 'forward') fwd++;
        }
      }
      return fwd / all;
    };
    expect(count(defaultSamplerConfig())).toBeCloseTo(0.5, 1);
    expect(count(samplerConfigSchema.parse({ forwardShare: 3, inverseShare: 1 }))).toBeCloseTo(0.75, 1);
    expect(count(samplerConfigSchema.parse({ inverseShare: 0 }))).toBe(1);
  });

  it('draws forward actions at the renormalized policy frequencies (10k actions, within 2 points)', () => {
    const config = defaultSamplerConfig();
    const observed = new Map<ActionKind, number>();
    const expected = new Map<ActionKind, number>();
    let n = 0;
    let bpWithChoice = 0;
    let bpUnreached = 0;
    for (let round = 0; n < 10000; round++) {
      for (const trace of traces) {
        const tree = trees.get(trace.id)!.forward;
        const { trajectory } = sampleDocument(trace, tree, Rng.from(round, trace.id, 'freq'), config);
        const policyStart = entryCallIndex(tree);
        for (const step of trajectory.steps) {
          if (!step.action) continue;
          if (step.node < policyStart) {
            // The harness's main frames are always stepped into (config.enterEntry).
            expect(step.action).toEqual({ kind: 'step_into' });
            continue;
          }
          n++;
          observed.set(step.action.kind, (observed.get(step.action.kind) ?? 0) + 1);
          for (const [a, p] of actionDistribution(config, 'forward', availableActions(tree, step.node))) expected.set(a, (expected.get(a) ?? 0) + p);
          if (step.action.kind === 'breakpoint') {
            const later = tree.nodes.slice(step.node + 1).filter((x) => x.event === 'line').map((x) => x.src);
            if (!later.includes(step.action.target!)) bpUnreached++;
            if (later.length > 0) bpWithChoice++;
          }
        }
      }
    }
    const kinds = ['step_into', 'step_over', 'step_return', 'breakpoint', 'continue'] as const;
    for (const a of kinds) {
      const obs = (observed.get(a) ?? 0) / n;
      const exp = (expected.get(a) ?? 0) / n;
      expect({ a, diff: Math.abs(obs - exp) < 0.02 }).toEqual({ a, diff: true });
    }
    // Sanity of the expectation itself: with every action available, step_into is .5*.35/.8 + .5*.5.
    const full = actionDistribution(config, 'forward', kinds);
    expect(full.get('step_into')).toBeCloseTo(0.5 * (0.35 / 0.8) + 0.25, 10);
    expect(full.get('continue')).toBeCloseTo(0.5 * (0.05 / 0.8), 10);
    // Some breakpoints target never-reached lines, most target reached ones.
    expect(bpUnreached).toBeGreaterThan(0);
    expect(bpUnreached).toBeLessThan(bpWithChoice);
  });

  it('draws inverse actions at the configured frequencies', () => {
    const config = defaultSamplerConfig();
    const counts = new Map<string, number>();
    let n = 0;
    for (let round = 0; n < 5000; round++) {
      for (const trace of traces) {
        const tree = trees.get(trace.id)!.inverse;
        if (tree.nodes.length === 0) continue;
        for (const s of sampleDocument(trace, tree, Rng.from(round, trace.id, 'inv'), config).trajectory.steps) {
          if (!s.action) continue;
          n++;
          counts.set(s.action.kind, (counts.get(s.action.kind) ?? 0) + 1);
        }
      }
    }
    expect((counts.get('inv_step_into') ?? 0) / n).toBeCloseTo(0.5, 1);
    expect((counts.get('inv_step_over') ?? 0) / n).toBeCloseTo(0.3, 1);
    expect((counts.get('inv_step_call') ?? 0) / n).toBeCloseTo(0.2, 1);
  });
});

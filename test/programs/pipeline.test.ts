import { defaultProgramsConfig, ProgramsConfigSchema } from '../../src/programs/config';
import { generateCorpus } from '../../src/programs/pipeline';
import { programKeys } from '../../src/programs/splits';
import { rawTracer } from '../../src/trace/tracers';
import type { ProgramRecord } from '../../src/trace/types';

const tracer = rawTracer().trace;

async function corpus(n: number, seed: number, batchSize?: number, against?: Set<string>) {
  const records: ProgramRecord[] = [];
  const summary = await generateCorpus({ n, seed, config: defaultProgramsConfig(), tracer, batchSize, against, write: (r) => records.push(r) });
  return { records, summary };
}

describe('generateCorpus', () => {
  test('N=200: at least 95% pass, with depth, exceptions and recursion in the mix', async () => {
    const { records, summary } = await corpus(200, 42);
    expect(summary.accepted).toBe(200);
    expect(summary.passRate).toBeGreaterThanOrEqual(0.95);
    expect(summary.traces.programsDepthAtLeast3).toBeGreaterThanOrEqual(0.2);
    expect(summary.traces.programsWithException).toBeGreaterThanOrEqual(0.05);
    expect(summary.traces.programsWithRecursion).toBeGreaterThanOrEqual(0.03);
    expect(summary.traces.endedInError).toBeGreaterThan(0);
    // Records: ids gen-<seed>-<n>-<k>, outputs for normal runs, no duplicate programs.
    for (const r of records) expect(r.id).toMatch(/^gen-42-\d+-\d$/);
    expect(records.filter((r) => r.output !== undefined).length).toBeGreaterThan(records.length * 0.9);
    const keys = await programKeys(records);
    const byProgram = new Map<string, string>();
    records.forEach((r, i) => byProgram.set(r.id.replace(/-\d$/, ''), keys[i]));
    expect(new Set(byProgram.values()).size).toBe(200);
    const total = Object.values(summary.rejections).reduce((a, b) => a + b, 0);
    expect(summary.candidates).toBe(summary.accepted + total);
  });

  test('output depends on (n, seed, config) only, not on the batch size; --against rejects', async () => {
    const a = await corpus(12, 9, 256);
    const b = await corpus(12, 9, 5);
    expect(b.records).toEqual(a.records);
    expect(b.summary).toEqual(a.summary);
    const firstKey = (await programKeys([a.records[0]]))[0];
    const c = await corpus(12, 9, 256, new Set([firstKey]));
    expect(c.summary.rejections.contaminated).toBe(1);
    expect(c.records.some((r) => r.code === a.records[0].code)).toBe(false);
  });

  test('a tiny step budget rejects with step_budget and the summary counts it', async () => {
    const config = ProgramsConfigSchema.parse({ filter: { maxEvents: 5 } });
    const records: ProgramRecord[] = [];
    const s = await generateCorpus({ n: 5, seed: 1, config, tracer, maxCandidates: 10, write: (r) => records.push(r) });
    expect(s.accepted).toBeLessThan(5);
    expect(s.rejections.step_budget).toBeGreaterThan(0);
    expect(s.candidates).toBe(10);
  });
});

import { createHash } from 'crypto';
import { defaultProgramsConfig, ProgramsConfigSchema } from '../../src/programs/config';
import { generateCorpus, shortfallMessage } from '../../src/programs/pipeline';
import { programKeys } from '../../src/programs/splits';
import { loadConfig } from '../../src/util/config';
import { assetPath } from '../../src/util/paths';
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

  test('the same seed gives byte-identical programs to the code before the speed-up (length prefilter, shared-child perturbation)', async () => {
    // sha256 of the records the generator wrote before issue 33's changes, for this config and seed.
    const config = loadConfig(ProgramsConfigSchema, { file: assetPath('configs/programs-quickstart.json') });
    const lines: string[] = [];
    const keys: string[] = [];
    const s = await generateCorpus({ n: 40, seed: 3, config, tracer, write: (r, key) => (lines.push(JSON.stringify(r) + '\n'), keys.push(key)) });
    expect([s.accepted, s.candidates, lines.length]).toEqual([40, 126, 59]);
    expect(createHash('sha256').update(lines.join('')).digest('hex')).toBe('b0129acc683734eac6829105348678763d7b89a096f5c571be45677fcf86f9b9');
    // The key handed to write is the program's split key, so callers need not parse again.
    expect(keys).toEqual(await programKeys(lines.map((l) => JSON.parse(l))));
  });

  test('keeps drawing past the old 2n + 100 candidates until n programs are accepted', async () => {
    // Short programs only: about 1 candidate in 10 passes, so 2n + 100 = 120 candidates would give ~12.
    const config = loadConfig(ProgramsConfigSchema, { file: assetPath('configs/programs-quickstart.json'), overrides: ['filter.maxChars=150'] });
    const small = await generateCorpus({ n: 10, seed: 5, config, tracer, write: () => undefined });
    expect(small.accepted).toBe(10);
    expect(small.stopped).toBeUndefined();
    const records: string[] = [];
    const s = await generateCorpus({ n: 20, seed: 5, config, tracer, write: (r) => records.push(r.id) });
    expect(s.accepted).toBe(20);
    expect(s.candidates).toBeGreaterThan(2 * 20 + 100);
    expect(s.rejections.too_long).toBeGreaterThan(s.candidates / 2);
    // A smaller corpus of a seed is the first programs of a larger one.
    expect(records.slice(0, small.recordsAccepted).every((id, i) => id === records[i])).toBe(true);
  });

  test('when the filters reject too much it stops and names the filter that rejects most', async () => {
    const config = loadConfig(ProgramsConfigSchema, { file: assetPath('configs/programs-quickstart.json'), overrides: ['filter.maxChars=60'] });
    const capped = await generateCorpus({ n: 5, seed: 2, config, tracer, maxCandidates: 40, write: () => undefined });
    expect(capped.candidates).toBe(40);
    expect(capped.stopped).toMatch(/^only 0 of 5 programs were accepted from 40 candidates \(0\.0%; the candidate cap was reached\); the filter rejecting most is too_long \(40 candidates\): raise filter\.maxChars/);
    // Without a cap given, the rate after 2,000 candidates shows 20n + 1000 cannot be reached.
    const projected = await generateCorpus({ n: 500, seed: 2, config, tracer, write: () => undefined });
    expect(projected.accepted).toBeLessThan(50); // the few programs of at most 60 characters
    expect(projected.candidates).toBeGreaterThanOrEqual(2000);
    expect(projected.candidates).toBeLessThan(3100);
    expect(projected.stopped).toContain('at this rate 500 would need more than the candidate cap');
    expect(shortfallMessage({ requested: 9, accepted: 3, candidates: 90, rejections: { 'unplanned_error:TypeError': 80, duplicate: 7 } })).toContain('is unplanned_error:TypeError (80 candidates): a generator bug');
  });
});

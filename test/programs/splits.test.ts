import * as path from 'path';
import { loadCruxEvalJsonl } from '../../src/programs/loaders';
import { decontaminate, onePerProgram, parseFractions, programKeys, splitByKeys, splitOf, splitRecords } from '../../src/programs/splits';
import type { ProgramRecord } from '../../src/trace/types';

const fx = (name: string) => path.join(__dirname, '../fixtures/programs', name);

describe('splits by program', () => {
  test('every input of a program and every renamed copy land in the same split, whatever the corpus', async () => {
    const crux = await loadCruxEvalJsonl(fx('cruxeval_sample.jsonl'));
    const renamed = crux.map((r) => ({ ...r, id: `${r.id}-renamed`, code: r.code.replace(/\bf\(/, 'g(').replace(/\btext\b/g, 'words_in') }));
    const extraInputs = crux.map((r) => ({ ...r, id: `${r.id}-b`, input: r.input + ' ' }));
    const whole = await splitRecords([...crux, ...renamed, ...extraInputs], { train: 0.5, validation: 0.25, test: 0.25 });
    const splitOfId = new Map<string, string>();
    for (const [name, recs] of Object.entries(whole.records)) for (const r of recs) splitOfId.set(r.id, name);
    for (const r of crux) {
      expect(splitOfId.get(`${r.id}-renamed`)).toBe(splitOfId.get(r.id));
      expect(splitOfId.get(`${r.id}-b`)).toBe(splitOfId.get(r.id));
    }
    // Stable under a different corpus composition: the first 5 alone get the same splits.
    const part = await splitRecords(crux.slice(0, 5), { train: 0.5, validation: 0.25, test: 0.25 });
    for (const [name, recs] of Object.entries(part.records)) for (const r of recs) expect(splitOfId.get(r.id)).toBe(name);
    // All three splits are used with these fractions on 20 programs.
    expect(Object.values(whole.programs).every((n) => n > 0)).toBe(true);
  });

  test('fractions are respected over many keys, and the salt reshuffles', () => {
    const counts = { train: 0, validation: 0, test: 0 };
    let moved = 0;
    for (let i = 0; i < 4000; i++) {
      const s = splitOf(`ast:key${i}`);
      counts[s]++;
      if (splitOf(`ast:key${i}`, undefined, 'other') !== s) moved++;
    }
    expect(counts.train / 4000).toBeCloseTo(0.9, 1);
    expect(counts.validation).toBeGreaterThan(120);
    expect(counts.test).toBeGreaterThan(120);
    expect(moved).toBeGreaterThan(100);
  });

  test('parseFractions rejects bad input', () => {
    expect(parseFractions('0.8,0.1,0.1')).toEqual({ train: 0.8, validation: 0.1, test: 0.1 });
    expect(() => parseFractions('0.8,0.1')).toThrow(/three non-negative numbers/);
    expect(() => parseFractions('0.8,0.3,0.1')).toThrow(/sum to 1/);
  });
});

describe('decontamination', () => {
  test('finds renamed copies of evaluation programs, not near misses', async () => {
    const crux = await loadCruxEvalJsonl(fx('cruxeval_sample.jsonl'));
    const ours: ProgramRecord[] = [
      { id: 'copy', code: crux[3].code.replace(/\btext\b/g, 'letters').replace(/\bvalue\b/g, 'ch'), input: "'a', 'b'" },
      { id: 'tweaked', code: crux[0].code.replace('reverse=True', 'reverse=False'), input: '[1]' },
      { id: 'fresh', code: 'def f(x):\n    return x * 41\n', input: '1' },
    ];
    const report = await decontaminate(ours, crux);
    expect(report.programs).toBe(3);
    expect(report.contaminated).toEqual([{ ids: ['copy'], evalIds: [crux[3].id] }]);
    const keys = await programKeys(ours);
    expect(new Set(keys).size).toBe(3);
  });
});

describe('held-out programs', () => {
  const rec = (id: string, code: string): ProgramRecord => ({ id, code, input: '1' });

  test('onePerProgram takes the first record of each distinct program, at most n', () => {
    const records = [rec('a-0', 'def f(x):\n    return x\n'), rec('a-1', 'def f(x):\n    return x\n'), rec('b-0', 'def f(y):\n    return y + 1\n'), rec('c-0', 'def f(z):\n    return 2\n')];
    expect(onePerProgram(records, 10).map((r) => r.id)).toEqual(['a-0', 'b-0', 'c-0']);
    expect(onePerProgram(records, 2).map((r) => r.id)).toEqual(['a-0', 'b-0']);
  });

  test('splitByKeys with the generator\'s keys is splitRecords without the parse', async () => {
    const records = Array.from({ length: 30 }, (_, i) => rec(`p${i}`, `def f(x):\n    return x + ${i}\n`));
    expect(splitByKeys(records, await programKeys(records))).toEqual(await splitRecords(records));
  });
});

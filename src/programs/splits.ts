import { createHash } from 'crypto';
import type { ProgramRecord } from './types';
import { UserError } from '../util/errors';
import { codeFacts, type CodeFacts } from './normalize';

/**
 * Splits by program, never by trace: a record's split is a hash of its program's normalized
 * AST (names alpha-renamed), so every input of a program, and every renamed copy of it, lands
 * in the same split, and the assignment of a program never depends on what else is in the
 * corpus. Code that does not parse is keyed by its exact text.
 */
export const SPLITS = ['train', 'validation', 'test'] as const;
/** A program split (held out by program): not a data set's train/val rows (data/manifest.ts DataSplit). */
export type ProgramSplit = (typeof SPLITS)[number];

export interface SplitFractions {
  train: number;
  validation: number;
  test: number;
}

export const DEFAULT_FRACTIONS: SplitFractions = { train: 0.9, validation: 0.05, test: 0.05 };

export function parseFractions(text: string): SplitFractions {
  const parts = text.split(',').map((s) => Number(s.trim()));
  if (parts.length !== 3 || parts.some((x) => !Number.isFinite(x) || x < 0)) {
    throw new UserError(`--fractions ${text}: expected three non-negative numbers TRAIN,VALIDATION,TEST, e.g. 0.9,0.05,0.05`);
  }
  const sum = parts[0] + parts[1] + parts[2];
  if (Math.abs(sum - 1) > 1e-6) throw new UserError(`--fractions ${text}: the fractions must sum to 1 (they sum to ${sum})`);
  return { train: parts[0], validation: parts[1], test: parts[2] };
}

/** The key a program is split and matched by. */
export function programKey(code: string, facts: CodeFacts): string {
  return facts.ok && facts.ast ? `ast:${facts.ast}` : `code:${createHash('sha256').update(code).digest('hex').slice(0, 20)}`;
}

/** Split of a program key: uniform in [0,1) from sha256(salt + key), cut at the fractions. */
export function splitOf(key: string, fractions: SplitFractions = DEFAULT_FRACTIONS, salt = ''): ProgramSplit {
  const h = createHash('sha256').update(`${salt}\u0000${key}`).digest();
  const u = (h.readUInt32BE(0) * 2 ** 21 + (h.readUInt32BE(4) >>> 11)) / 2 ** 53;
  if (u < fractions.train) return 'train';
  if (u < fractions.train + fractions.validation) return 'validation';
  return 'test';
}

export interface SplitResult {
  records: Record<ProgramSplit, ProgramRecord[]>;
  programs: Record<ProgramSplit, number>;
}

/** Assigns every record to a split by its program; record order is kept within each split. */
export async function splitRecords(records: ProgramRecord[], fractions = DEFAULT_FRACTIONS, salt = ''): Promise<SplitResult> {
  return splitByKeys(records, await programKeys(records), fractions, salt);
}

/** splitRecords with the program keys already known (`keys[i]` is records[i]'s programKey). */
export function splitByKeys(records: ProgramRecord[], keys: string[], fractions = DEFAULT_FRACTIONS, salt = ''): SplitResult {
  const out: SplitResult = { records: { train: [], validation: [], test: [] }, programs: { train: 0, validation: 0, test: 0 } };
  const seen = new Set<string>();
  records.forEach((r, i) => {
    const split = splitOf(keys[i], fractions, salt);
    out.records[split].push(r);
    if (!seen.has(keys[i])) {
      seen.add(keys[i]);
      out.programs[split]++;
    }
  });
  return out;
}

/**
 * The first record of each distinct program (by code: a program's records share it), in record
 * order, at most `n`: a held-out set that counts programs, not inputs.
 */
export function onePerProgram<R extends { code: string }>(records: R[], n: number): R[] {
  const seen = new Set<string>();
  const out: R[] = [];
  for (const r of records) {
    if (out.length >= n) break;
    if (seen.has(r.code)) continue;
    seen.add(r.code);
    out.push(r);
  }
  return out;
}

/** Program keys of records, parsing each distinct code once. */
export async function programKeys(records: Array<{ code: string }>): Promise<string[]> {
  const distinct = [...new Set(records.map((r) => r.code))];
  const facts = await codeFacts(distinct);
  const byCode = new Map(distinct.map((c, i) => [c, programKey(c, facts[i])]));
  return records.map((r) => byCode.get(r.code)!);
}

export interface ContaminationReport {
  /** Distinct programs checked. */
  programs: number;
  /** Programs whose normalized AST equals one in the evaluation set. */
  contaminated: Array<{ ids: string[]; evalIds: string[] }>;
  /** Records belonging to contaminated programs. */
  records: number;
}

/** Which programs of `records` equal (by normalized AST) a program of `evalSet`. */
export async function decontaminate(records: ProgramRecord[], evalSet: Array<{ id: string; code: string }>): Promise<ContaminationReport> {
  const evalKeys = await programKeys(evalSet);
  const evalByKey = new Map<string, string[]>();
  evalKeys.forEach((k, i) => evalByKey.set(k, [...(evalByKey.get(k) ?? []), evalSet[i].id]));
  const keys = await programKeys(records);
  const hits = new Map<string, string[]>();
  let nrec = 0;
  keys.forEach((k, i) => {
    if (!evalByKey.has(k)) return;
    nrec++;
    hits.set(k, [...(hits.get(k) ?? []), records[i].id]);
  });
  return {
    programs: new Set(keys).size,
    contaminated: [...hits.entries()].map(([k, ids]) => ({ ids, evalIds: evalByKey.get(k)! })),
    records: nrec,
  };
}

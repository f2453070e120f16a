import * as fs from 'fs';
import * as path from 'path';
import { traceInProcess } from '../../src/trace/inprocess';
import type { ProgramRecord, TraceRecord } from '../../src/trace/types';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'debugger');

export function fixturePrograms(): ProgramRecord[] {
  return fs
    .readFileSync(path.join(FIXTURES, 'programs.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ProgramRecord);
}

let cache: Map<string, TraceRecord> | undefined;

/** Traces of all fixture programs (traced once per test file). */
export function fixtureTraces(): Map<string, TraceRecord> {
  if (!cache) cache = new Map(traceInProcess(fixturePrograms()).map((t) => [t.id, t]));
  return cache;
}

export function fixtureTrace(id: string): TraceRecord {
  const t = fixtureTraces().get(id);
  if (!t) throw new Error(`no fixture program ${id}`);
  return t;
}

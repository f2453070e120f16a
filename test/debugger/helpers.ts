import * as path from 'path';
import { traceInProcess } from '../../src/trace/inprocess';
import { readJsonlSync } from '../../src/util/jsonl';
import type { ProgramRecord, TraceRecord } from '../../src/trace/types';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'debugger');

export function fixturePrograms(): ProgramRecord[] {
  return readJsonlSync<ProgramRecord>(path.join(FIXTURES, 'programs.jsonl'));
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

import * as fs from 'fs';
import * as path from 'path';
import { traceInProcess } from '../../src/trace/inprocess';
import type { ProgramRecord, TraceRecord } from '../../src/trace/types';

let cached: TraceRecord[] | undefined;

/** Traces of the eval fixture programs (traced once per test file). */
export function fixtureTraces(): TraceRecord[] {
  if (!cached) {
    const file = path.join(__dirname, '..', 'fixtures', 'eval', 'programs.jsonl');
    const programs = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as ProgramRecord);
    cached = traceInProcess(programs);
  }
  return cached;
}

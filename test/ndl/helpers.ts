/** Shared test helpers: tracing small programs and hand-built trees for formatter unit tests. */
import * as fs from 'fs';
import * as path from 'path';
import type { StateNode, StateTree } from '../../src/debugger/types';
import { reference } from '../helpers/reference';
import { traceInProcess } from '../../src/trace/inprocess';
import type { ProgramRecord, TraceRecord } from '../../src/trace/types';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'ndl');

export function fixture(name: string): string {
  return fs.readFileSync(path.join(FIXTURES, name), 'utf8');
}

/** The reference program count("berry", "r") as a ProgramRecord. */
export function countProgram(): ProgramRecord {
  const entry = reference('count.entry').trim();
  const m = /^(\w+)\((.*)\)$/s.exec(entry);
  if (!m) throw new Error(`bad count.entry: ${entry}`);
  return { id: 'count', code: reference('count.py'), entry: m[1], input: m[2] };
}

/** The fixture programs of test/fixtures/ndl/programs.jsonl. */
export function fixturePrograms(): ProgramRecord[] {
  return fixture('programs.jsonl')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ProgramRecord);
}

const traceCache = new Map<string, TraceRecord[]>();

/** Traces once per test file (tracing spawns python). */
export function traceAll(programs: ProgramRecord[]): TraceRecord[] {
  const key = programs.map((p) => p.id).join(',');
  let t = traceCache.get(key);
  if (!t) traceCache.set(key, (t = traceInProcess(programs)));
  return t;
}

/** A forward tree straight from the events (spec §4: one node per recorded event). */
export function handForwardTree(trace: TraceRecord): StateTree {
  const nodes: StateNode[] = trace.events.map((e, index) => ({
    index,
    event: e.event,
    depth: e.depth,
    invocation: e.invocation,
    line: e.line,
    src: e.src,
    locals: e.locals,
    value: e.value,
    traceIndex: index,
  }));
  return { direction: 'forward', nodes, exitKind: trace.status };
}

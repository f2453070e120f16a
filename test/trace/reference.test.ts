import * as fs from 'fs';
import * as path from 'path';
import { traceInProcess } from '../../src/trace/inprocess';
import { traceProgram } from '../../src/trace/index';
import type { TraceEvent, TraceRecord } from '../../src/trace/types';
import { delta, FIXTURES, parseFrames, pyJson } from './helpers';
import { REFERENCE } from '../helpers/reference';

const REF = REFERENCE;
const code = fs.readFileSync(path.join(REF, 'count.py'), 'utf8');
const call = fs.readFileSync(path.join(REF, 'count.entry'), 'utf8').trim();

let rec: TraceRecord;
beforeAll(async () => {
  rec = await traceProgram({ id: 'count', code, call });
});

describe('count("berry", "r") against the reference documents', () => {
  it('runs normally in the sandbox and records the CONTEXT line numbers and sources', () => {
    expect(rec.status).toBe('normal');
    expect(rec.entry_call).toBe('count("berry", "r")');
    expect(rec.python).toMatch(/^3\.\d+\.\d+$/);
    expect(['bwrap', 'guards']).toContain(rec.isolation);
    expect(rec.events[0]).toMatchObject({ event: 'call', depth: 0, invocation: 0, line: 7, src: 'def main():', func: 'main' });
    expect(rec.events[2]).toMatchObject({ event: 'call', depth: 1, invocation: 1, line: 1, src: 'def count(s, t):' });
    // the line that made the traced call lists it (the inverse tree's inv_line_call needs it)
    expect(rec.events[1].calls).toEqual([1]);
  });

  it('forward: every step_into frame has the reference event, SRC and LOCALS/VALUE', () => {
    const frames = parseFrames(fs.readFileSync(path.join(REF, 'count.forward.ndl'), 'utf8'));
    expect(rec.events.map((e) => e.event)).toEqual(frames.map((f) => f.sep));
    rec.events.forEach((e, i) => {
      const prev: TraceEvent | undefined = rec.events[i - 1];
      let arg: string;
      if (e.event === 'return' || e.event === 'exception') arg = pyJson(e.value);
      else if (e.event === 'line' && prev && prev.invocation === e.invocation) arg = pyJson(delta(e.locals, prev.locals));
      else arg = pyJson(e.locals);
      expect({ i, src: e.src, arg }).toEqual({ i, src: frames[i].src, arg: frames[i].arg });
    });
  });

  it('inverse: the entry invocation reversed has the reference states', () => {
    const frames = parseFrames(fs.readFileSync(path.join(REF, 'count.inverse.ndl'), 'utf8'));
    const nodes = rec.events.filter((e) => e.invocation === 1).reverse();
    expect(nodes.map((e) => `inv_${e.event}`)).toEqual(frames.map((f) => f.sep));
    nodes.forEach((e, i) => {
      const later = nodes[i - 1];
      let arg: string;
      if (e.event === 'return') arg = pyJson(e.value);
      else if (e.event === 'line' && later) arg = pyJson(delta(e.locals, later.locals));
      else arg = pyJson(e.locals);
      expect({ i, src: e.src, arg }).toEqual({ i, src: frames[i].src, arg: frames[i].arg });
    });
  });

  it('the sandbox records exactly what the in-process tracer records', () => {
    const [raw] = traceInProcess([{ id: 'count', code, input: '"berry", "r"', entry: 'count' }]);
    expect(rec.events).toEqual(raw.events);
  });
});

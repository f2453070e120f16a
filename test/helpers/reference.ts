import * as fs from 'fs';
import * as path from 'path';

/**
 * The spec's reference example (spec ndl.md, reference/): count.py, its entry call and its
 * forward and inverse NDL documents, kept once in test/fixtures/reference/ for the trace,
 * debugger and ndl tests (tests do not read /work/shared).
 */
export const REFERENCE = path.join(__dirname, '..', 'fixtures', 'reference');

export function reference(name: 'count.py' | 'count.entry' | 'count.forward.ndl' | 'count.inverse.ndl'): string {
  return fs.readFileSync(path.join(REFERENCE, name), 'utf8');
}

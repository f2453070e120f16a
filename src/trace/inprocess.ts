import { execFileSync } from 'child_process';
import { parseJsonl } from '../util/jsonl';
import { assetPath } from '../util/paths';
import type { ProgramRecord, TraceRecord } from './types';

/**
 * Traces programs with the raw in-process tracer (src/trace/tracer.py run as a script): no
 * sandbox, no limits beyond the tracer's event cap. For trusted fixtures, tests and the
 * benchmark's raw-settrace baseline; user programs go through the sandboxed runner.
 */
export function traceInProcess(programs: ProgramRecord[]): TraceRecord[] {
  if (programs.length === 0) return [];
  const input = programs.map((p) => JSON.stringify(p)).join('\n') + '\n';
  const out = execFileSync('python3', [assetPath('src/trace/tracer.py')], {
    input,
    maxBuffer: 1 << 30,
    env: { ...process.env, PYTHONHASHSEED: '0' },
  }).toString('utf8');
  return parseJsonl<TraceRecord>(out, 'tracer.py output');
}

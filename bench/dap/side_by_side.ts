/**
 * The side-by-side check (docs/dap.md): the same seeded request scripts against debugpy and
 * `ndbg dap`, compared at every stop. A stop agrees only when file, line, function, depth and
 * the top frame's locals all match (or both programs have exited).
 */
import { statementLines } from '../../src/debugger/source';
import { Rng } from '../../src/util/rng';
import type { Driver, Observation, ProgramCase, RequestKind } from './clients';

export interface Step {
  kind: RequestKind;
  line?: number;
}

export interface StopComparison {
  program: string;
  script: number;
  index: number;
  /** `launch` for the first stop. */
  kind: RequestKind | 'launch';
  line?: number;
  agree: boolean;
  differs: string[];
  reference: Observation;
  candidate: Observation;
}

const KINDS: RequestKind[] = ['stepIn', 'next', 'stepOut', 'continue', 'breakpoint'];
const WEIGHTS = [0.32, 0.32, 0.14, 0.06, 0.16];

/** Statement lines of the program itself (not main's), the breakpoint candidates. */
export function programStatementLines(p: ProgramCase): number[] {
  const code = p.code.replace(/\n+$/, '');
  const n = code.split('\n').length;
  return statementLines(code + '\n').map((s) => s.line).filter((l) => l <= n);
}

/** A seeded request script, keyed by (seed, program id, script number). */
export function requestScript(p: ProgramCase, seed: number, script: number, length: number): Step[] {
  const rng = Rng.from(seed, 'dap-script', p.id, script);
  const lines = programStatementLines(p);
  const out: Step[] = [];
  for (let i = 0; i < length; i++) {
    const kind = KINDS[rng.weighted(WEIGHTS)];
    if (kind === 'breakpoint' && lines.length > 0) out.push({ kind, line: rng.choice(lines) });
    else if (kind !== 'breakpoint') out.push({ kind });
  }
  return out;
}

export function compareObservations(a: Observation, b: Observation): string[] {
  if (a.kind === 'exit' || b.kind === 'exit') return a.kind === b.kind ? [] : ['exit'];
  const out: string[] = [];
  if (a.file !== b.file) out.push('file');
  if (a.line !== b.line) out.push('line');
  if (a.func !== b.func) out.push('function');
  if (a.depth !== b.depth) out.push('depth');
  const ka = Object.keys(a.locals).sort();
  const kb = Object.keys(b.locals).sort();
  if (ka.join('\0') !== kb.join('\0') || ka.some((k) => a.locals[k] !== b.locals[k])) out.push('locals');
  return out;
}

/**
 * Runs one script on both drivers in lockstep. Stops at the first exit of either (the rest of
 * the script has nothing to compare) and after a disagreement on where the program is (what
 * follows would compare different places, not the next request).
 */
export async function runScript(p: ProgramCase, script: number, steps: Step[], reference: Driver, candidate: Driver): Promise<StopComparison[]> {
  const out: StopComparison[] = [];
  const push = (index: number, kind: RequestKind | 'launch', line: number | undefined, r: Observation, c: Observation) => {
    const differs = compareObservations(r, c);
    out.push({ program: p.id, script, index, kind, ...(line !== undefined ? { line } : {}), agree: differs.length === 0, differs, reference: r, candidate: c });
    return differs;
  };
  const [r0, c0] = await Promise.all([reference.launch(), candidate.launch()]);
  let d = push(0, 'launch', undefined, r0, c0);
  if (r0.kind === 'exit' || c0.kind === 'exit' || d.some((x) => x !== 'locals')) return out;
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    const r = await reference.request(s.kind, s.line);
    const c = await candidate.request(s.kind, s.line);
    d = push(i + 1, s.kind, s.line, r, c);
    if (r.kind === 'exit' || c.kind === 'exit' || d.some((x) => x !== 'locals')) break;
  }
  return out;
}

export interface Summary {
  programs: number;
  scripts: number;
  stops: number;
  agree: number;
  rate: number;
  byKind: Record<string, { stops: number; agree: number; rate: number }>;
}

export function summarize(results: StopComparison[]): Summary {
  const byKind: Summary['byKind'] = {};
  for (const r of results) {
    const k = (byKind[r.kind] ??= { stops: 0, agree: 0, rate: 0 });
    k.stops++;
    if (r.agree) k.agree++;
  }
  for (const k of Object.values(byKind)) k.rate = k.stops ? k.agree / k.stops : 0;
  const agree = results.filter((r) => r.agree).length;
  return {
    programs: new Set(results.map((r) => r.program)).size,
    scripts: new Set(results.map((r) => `${r.program}#${r.script}`)).size,
    stops: results.length,
    agree,
    rate: results.length ? agree / results.length : 0,
    byKind,
  };
}

import type { TraceEvent, TraceRecord } from './types';

/**
 * A trace as a person reads it (what `ndbg trace --program` prints): one row per event with
 * its index, event, line, the source line indented by call depth, and what changed: a call
 * shows its arguments, a line the locals that are new or changed since the previous event of
 * the same invocation, a return `-> value`, an exception `!! value`.
 */
export function formatTrace(rec: TraceRecord, opts: { maxEvents?: number; width?: number } = {}): string {
  const maxEvents = opts.maxEvents ?? 400;
  const width = opts.width ?? 110;
  const out: string[] = [];
  const ret = entryValue(rec);
  const head = `${rec.entry_call}${ret !== undefined ? ` -> ${ret}` : ''}`;
  const meta = [rec.status, `${rec.events.length} events`, `python ${rec.python || '?'}`];
  if (rec.isolation) meta.push(`sandbox ${rec.isolation}`);
  out.push(`${head}   [${meta.join(' · ')}]`);
  out.push('');
  const srcWidth = Math.min(48, Math.max(20, ...rec.events.map((e) => e.src.length + 2 * e.depth)));
  out.push(`${'#'.padStart(5)}  ${'event'.padEnd(9)} ${'line'.padStart(4)}  ${'source'.padEnd(srcWidth)}  state`);
  const previous = new Map<number, Record<string, string>>();
  const shown = rec.events.slice(0, maxEvents);
  shown.forEach((e, i) => {
    const src = `${'  '.repeat(e.depth)}${e.src}`;
    const state = describe(e, previous.get(e.invocation));
    previous.set(e.invocation, e.locals);
    const row = `${String(i).padStart(5)}  ${e.event.padEnd(9)} ${String(e.line).padStart(4)}  ${fit(src, srcWidth).padEnd(srcWidth)}  ${state}`;
    out.push(fit(row, width).trimEnd());
  });
  if (rec.events.length > shown.length) out.push(`  ... ${rec.events.length - shown.length} more events (use --json for all)`);
  out.push('');
  out.push(exitLine(rec));
  if (rec.stdout) out.push(`program stdout${rec.stdout_truncated ? ` (${rec.stdout_truncated} more characters dropped)` : ''}:\n${indent(rec.stdout)}`);
  if (rec.stderr) out.push(`program stderr:\n${indent(rec.stderr)}`);
  if (rec.blocked?.length) out.push(`sandbox refused: ${rec.blocked.join(', ')}`);
  return out.join('\n') + '\n';
}

function describe(e: TraceEvent, before: Record<string, string> | undefined): string {
  switch (e.event) {
    case 'call':
      return `${e.resumed ? 'resume ' : ''}${pairs(e.locals) || '(no arguments)'}`;
    case 'return':
      return e.value === null ? '-> (left by an exception)' : `${e.yield ? 'yield' : '->'} ${e.value}`;
    case 'exception':
      return `!! ${e.value}`;
    default: {
      const changed: Record<string, string> = {};
      for (const [k, v] of Object.entries(e.locals)) if (!before || before[k] !== v) changed[k] = v;
      return pairs(changed);
    }
  }
}

function pairs(locals: Record<string, string>): string {
  return Object.entries(locals)
    .map(([k, v]) => `${k}=${v}`)
    .join('  ');
}

function exitLine(rec: TraceRecord): string {
  if (rec.status === 'normal') return `exit: normal`;
  const why = rec.limit ? ` (${rec.limit})` : '';
  return `exit: ${rec.status}${why}: ${rec.error ?? ''}`;
}

function entryValue(rec: TraceRecord): string | null | undefined {
  if (rec.status !== 'normal') return undefined;
  for (let i = rec.events.length - 1; i >= 0; i--) {
    const e = rec.events[i];
    if (e.depth === 1 && e.event === 'return' && !e.yield) return e.value;
  }
  return undefined;
}

function fit(s: string, width: number): string {
  return s.length <= width ? s : `${s.slice(0, width - 1)}…`;
}

function indent(s: string): string {
  return s
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => `  | ${l}`)
    .join('\n');
}

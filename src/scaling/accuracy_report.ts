import { escapeHtml, formatNumber } from '../train/svg';
import type { CellEvalRow } from './cell_eval';
import type { EvalPoint } from './fit';
import { logPlot, PALETTE, type PlotSeries } from './plot';

/**
 * The report's next-state section: full-frame accuracy vs training compute, one series per
 * size, overall and as small multiples per action, each with the rule baseline as a dashed
 * line, plus the table of cells behind them.
 */
const pct = (x: number) => 100 * x;

export function accuracySection(evals: EvalPoint[]): string {
  const sizes = [...new Map([...evals].sort((a, b) => a.N - b.N).map((e) => [e.size, e.N])).entries()];
  const lo = Math.min(...evals.map((e) => e.flops));
  const hi = Math.max(...evals.map((e) => e.flops));
  const plot = (title: string, rowOf: (e: EvalPoint) => CellEvalRow | undefined, small: boolean) => {
    const series: PlotSeries[] = sizes.map(([size, N], i) => {
      // Cells with no scored task for this action have no rate to draw.
      const pts = evals
        .filter((e) => e.size === size)
        .map((e) => [e.flops, rowOf(e)] as const)
        .filter((p): p is readonly [number, CellEvalRow] => p[1] !== undefined && p[1].n > 0)
        .sort((a, b) => a[0] - b[0])
        .map(([C, r]) => [C, pct(r.model)] as [number, number]);
      return { label: `${size} (N=${formatNumber(N)})`, color: PALETTE[i % PALETTE.length], dots: pts, line: pts };
    });
    const base = evals.map(rowOf).filter((r): r is CellEvalRow => r !== undefined && r.n > 0).map((r) => pct(r.baseline));
    if (base.length) {
      // The rule does not learn: its rate moves only when the cells' task sets differ (another context or tokenizer).
      const mean = base.reduce((a, b) => a + b, 0) / base.length;
      const spread = Math.max(...base) - Math.min(...base) > 1e-9 ? `, mean of ${formatNumber(Math.min(...base))}–${formatNumber(Math.max(...base))}` : '';
      series.push({ label: `rule baseline${spread}`, color: '#000', dashed: true, line: [[lo, mean], [hi, mean]] });
    }
    return logPlot(title, series, { xLabel: 'training FLOPs', yLabel: 'full-frame exact match, %', yMin: 0, yMax: 100, small });
  };
  const actions = [...new Set(evals.flatMap((e) => Object.keys(e.next_state.per_action)))];
  const first = evals[0].next_state;
  const overall = plot('next-state accuracy (all actions) vs training compute, per size', (e) => e.next_state.overall, false);
  const multiples = actions.map((a) => plot(a, (e) => e.next_state.per_action[a], true)).join('\n');
  const fmtRow = (r: CellEvalRow | undefined) => (r && r.n > 0 ? `${pct(r.model).toFixed(1)}` : '—');
  const table = `<table><tr><th>cell</th><th>N</th><th>FLOPs</th><th>step</th><th>tasks</th><th>programs</th><th>all [95%]</th><th>rule baseline</th>${actions.map((a) => `<th>${escapeHtml(a)}</th>`).join('')}</tr>
${[...evals]
  .sort((a, b) => a.N - b.N || a.flops - b.flops)
  .map((e) => {
    const ns = e.next_state;
    const o = ns.overall;
    return `<tr><td>${escapeHtml(e.id)}</td><td>${formatNumber(e.N)}</td><td>${e.flops.toExponential(2)}</td><td>${ns.step}</td><td>${ns.tasks}${ns.did_not_fit ? ` (+${ns.did_not_fit} did not fit)` : ''}</td><td>${ns.programs}</td><td>${pct(o.model).toFixed(1)} <span class="ci">[${pct(o.model_ci[0]).toFixed(0)}, ${pct(o.model_ci[1]).toFixed(0)}]</span></td><td>${pct(o.baseline).toFixed(1)}</td>${actions.map((a) => `<td>${fmtRow(ns.per_action[a])}</td>`).join('')}</tr>`;
  })
  .join('\n')}
</table>`;
  const s = first.settings;
  return `${overall}
<p>Per action (colours as above; dashed: the rule baseline on the same tasks):</p>
<div class="multiples">${multiples}</div>
<p>Each cell's last checkpoint, evaluated as <code>ndbg eval next-state</code> does: ${s.per_program} task(s) per program and action over ${s.actions.length} actions, seed ${s.seed}, decoded by ${s.decoding ?? '(a decoding not recorded)'} to at most ${s.max_new_tokens} tokens, SRC ${s.src_constraint ? 'constrained to program lines' : 'decoded freely'}; full-frame exact match (EVT, SRC and ARG right), interval bootstrapped over programs. Tasks whose prompt and answer do not fit a checkpoint's context are not scored.</p>
${table}`;
}

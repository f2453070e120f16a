import { escapeHtml, formatNumber } from '../train/svg';
import { htmlPage } from '../train/report';
import { accuracySection } from './accuracy_report';
import { flopsPerToken } from './frontier';
import { predictLoss } from './law';
import type { ScalingFit } from './fit';
import { logPlot, logSpace, PALETTE, type PlotSeries } from './plot';

/**
 * The scaling report: one self-contained HTML page (inline CSS and SVG) of a `scaling fit`:
 * loss vs compute per size with the fitted law, the compute-optimal frontier, the exponents with
 * their intervals beside the published ones, the approach-2 slices, the held-out prediction and,
 * when cells were evaluated, next-state accuracy vs compute.
 */
const fmtCi = (v: number, ci: { lo: number; hi: number }) => `${formatNumber(v)} <span class="ci">[${formatNumber(ci.lo)}, ${formatNumber(ci.hi)}]</span>`;

export function renderScalingReport(fit: ScalingFit): string {
  const a3 = fit.approach3;
  const law = a3.law;
  const sizes = [...new Map(fit.points.map((p) => [p.size, p])).values()].sort((a, b) => a.N - b.N);
  const cLo = Math.min(...fit.points.map((p) => p.flops));
  const cHi = Math.max(...fit.points.map((p) => p.flops));
  const series: PlotSeries[] = sizes.map((s, i) => ({
    label: `${s.size} (N=${formatNumber(s.N)})`,
    color: PALETTE[i % PALETTE.length],
    dots: fit.points.filter((p) => p.size === s.size).map((p) => [p.flops, p.loss] as [number, number]),
    // Along a size, D = C / FLOPs-per-token of that size: the law's curve in the cells' own compute units.
    line: logSpace(cLo / 2, cHi * 2, 40).map((C) => [C, predictLoss(law, s.N, C / s.flopsPerToken)] as [number, number]),
  }));
  const opt = fit.compute_optimal;
  series.push({ label: 'compute-optimal (fit)', color: '#000', dashed: true, line: opt.filter((o) => o.C >= cLo / 2 && o.C <= cHi * 4).map((o) => [o.C, o.loss]) });
  const lossName = fit.loss === 'val' ? 'final validation loss' : 'final train loss';
  const nName = fit.params === 'total' ? 'parameters N' : 'non-embedding parameters N';
  const plots = [
    logPlot(`${lossName} vs training compute, per size, with L(N, D) fitted`, series, { xLabel: 'training FLOPs (6·N_matmul + 12·L·d·T per token)', yLabel: lossName }),
    logPlot(
      'compute-optimal frontier: N_opt and D_opt vs compute',
      [
        { label: 'N_opt (approach 3)', color: PALETTE[0], line: opt.map((o) => [o.C, o.N]) },
        { label: 'D_opt tokens (approach 3)', color: PALETTE[1], line: opt.map((o) => [o.C, o.D]) },
        ...(fit.approach2
          ? [
              { label: 'N_opt (approach 2 slices)', color: PALETTE[0], dots: fit.approach2.slices.filter((s) => s.minimum).map((s) => [s.C, s.minimum!.N] as [number, number]) },
              { label: 'D_opt (approach 2 slices)', color: PALETTE[1], dots: fit.approach2.slices.filter((s) => s.minimum).map((s) => [s.C, s.minimum!.D] as [number, number]) },
            ]
          : []),
        { label: 'cells trained (N)', color: '#999', dots: fit.points.map((p) => [p.flops, p.N] as [number, number]) },
      ],
      { xLabel: 'training FLOPs', yLabel: 'N or D', logY: true },
    ),
  ];
  if (fit.approach2) {
    const slices = fit.approach2.slices.filter((s) => s.coef);
    const iso = slices.map((s, i): PlotSeries => {
      const pts = fit.points.filter((p) => p.budgetKind === 'flops' && p.budget === s.C);
      const ns = pts.map((p) => p.N);
      const [c2, c1, c0] = s.coef!;
      return {
        label: `C=${formatNumber(s.C)}${s.minimum ? '' : ' (no min)'}`,
        color: PALETTE[i % PALETTE.length],
        dots: pts.map((p) => [p.N, p.loss] as [number, number]),
        line: logSpace(Math.min(...ns), Math.max(...ns), 30).map((N) => [N, c2 * Math.log(N) ** 2 + c1 * Math.log(N) + c0] as [number, number]),
      };
    });
    plots.push(logPlot('approach 2: iso-FLOP slices, loss vs N with parabolas in ln N', iso, { xLabel: nName, yLabel: lossName }));
  }
  const row = (name: string, ours: string, ch: number, rep: number) => `<tr><td>${name}</td><td>${ours}</td><td>${ch}</td><td>${rep}</td></tr>`;
  const P = fit.published;
  const exponents = `<table><tr><th></th><th>this sweep (${Math.round(a3.level * 100)}% bootstrap interval, ${a3.bootstrap.samples} resamples)</th><th>${escapeHtml(P.chinchilla.label)}</th><th>${escapeHtml(P.replication.label)}</th></tr>
${row('α (N exponent)', fmtCi(law.alpha, a3.ci.alpha), P.chinchilla.alpha, P.replication.alpha)}
${row('β (D exponent)', fmtCi(law.beta, a3.ci.beta), P.chinchilla.beta, P.replication.beta)}
${row('E', fmtCi(law.E, a3.ci.E), P.chinchilla.E, P.replication.E)}
${row('A', fmtCi(law.A, a3.ci.A), P.chinchilla.A, P.replication.A)}
${row('B', fmtCi(law.B, a3.ci.B), P.chinchilla.B, P.replication.B)}
<tr><td>a = β/(α+β): N_opt ∝ C^a</td><td>${fmtCi(a3.allocation.a, a3.allocation.a_ci)}</td><td>0.46 (0.50 by approaches 1, 2)</td><td>0.51</td></tr>
</table>
<p>Fit: Huber loss (δ = ${a3.huber_delta}) on ln L, log-sum-exp parameterisation, L-BFGS from ${a3.starts} starting points; objective ${a3.objective.toExponential(3)} on ${fit.points.length} cells. N = ${escapeHtml(nName)}; D = training tokens. The published constants use total parameters and natural-text loss, so only the exponents are comparable in kind, and only loosely at these sizes.</p>`;
  const budgets = `<table><tr><th>compute C (FLOPs)</th><th>N_opt</th><th>D_opt (tokens)</th><th>tokens per parameter</th><th>predicted loss [${Math.round(a3.level * 100)}%]</th></tr>
${opt.map((o) => `<tr><td>${o.C.toExponential(0)}</td><td>${fmtCi(o.N, o.N_ci)}</td><td>${formatNumber(o.D)}</td><td>${formatNumber(o.D / o.N)}</td><td>${fmtCi(o.loss, o.loss_ci)}</td></tr>`).join('\n')}
</table>
<p>Compute counts as the cells count it: FLOPs per token fitted across the sizes as ${formatNumber(fit.flops_model.k)}·N^${fit.flops_model.p.toFixed(3)} (at N = ${formatNumber(sizes[0].N)}: ${formatNumber(flopsPerToken(fit.flops_model, sizes[0].N))}); D = C / that. Rows past the largest cell's compute are extrapolations.</p>`;
  const a2 = fit.approach2
    ? `<table><tr><th>C</th><th>sizes</th><th>N_opt</th><th>D_opt</th><th>loss at minimum</th><th>note</th></tr>
${fit.approach2.slices.map((s) => `<tr><td>${s.C.toExponential(2)}</td><td>${s.points}</td><td>${s.minimum ? formatNumber(s.minimum.N) : '—'}</td><td>${s.minimum ? formatNumber(s.minimum.D) : '—'}</td><td>${s.minimum ? formatNumber(s.minimum.loss) : '—'}</td><td>${escapeHtml(s.note ?? '')}</td></tr>`).join('\n')}
</table><p>${fit.approach2.nOpt ? `N_opt ∝ C^${fit.approach2.nOpt.a.toFixed(3)}, D_opt ∝ C^${fit.approach2.dOpt!.b.toFixed(3)} over the slices with a minimum.` : 'Fewer than two slices have an interior minimum: approach 2 gives no exponent at these sizes; approach 3 stands alone.'}</p>`
    : '<p>The grid has no iso-FLOP slices (token budgets): approach 2 does not apply.</p>';
  const h = fit.holdout;
  const holdout = h
    ? `<p>Cell <code>${escapeHtml(h.id)}</code> (N=${formatNumber(h.N)}, D=${formatNumber(h.D)}) was left out of the fit. Predicted ${lossName}: ${fmtCi(h.predicted, h.ci)}; measured: ${h.measured === null ? 'not trained yet' : `${formatNumber(h.measured)} (error ${h.error_pct!.toFixed(2)}%)`}.</p>`
    : '<p>No cell was held out (pass <code>--holdout CELL</code>).</p>';
  const cells = `<table><tr><th>cell</th><th>N</th><th>D</th><th>FLOPs</th><th>${lossName}</th><th>fit</th></tr>
${fit.points.map((p) => `<tr><td>${escapeHtml(p.id)}</td><td>${formatNumber(p.N)}</td><td>${formatNumber(p.D)}</td><td>${p.flops.toExponential(2)}</td><td>${p.loss.toFixed(4)}</td><td>${predictLoss(law, p.N, p.D).toFixed(4)}</td></tr>`).join('\n')}
</table>${fit.skipped.length ? `<p>Not in the fit: ${fit.skipped.map((s) => `${escapeHtml(s.id)} (${escapeHtml(s.why)})`).join(', ')}.</p>` : ''}`;
  const sections = [
    { title: 'Loss vs compute', html: plots.join('\n') },
    { title: 'Fitted law L(N, D) = E + A/N^α + B/D^β (approach 3)', html: exponents },
    { title: 'For a compute budget C: which (N, D), what loss', html: budgets },
    { title: 'Approach 2: iso-FLOP minima', html: a2 },
    { title: 'Held-out prediction', html: holdout },
    ...(fit.next_state?.length ? [{ title: 'Next-state accuracy vs compute', html: accuracySection(fit.next_state) }] : []),
    { title: 'Cells', html: cells },
  ];
  return htmlPage(`ndbg scaling fit: ${fit.sweep}`, sections, '.ci{color:#777;font-size:.9em}.multiples{display:flex;flex-wrap:wrap;gap:0 1em}.multiples figure{margin:.5em 0}');
}

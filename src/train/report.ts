import * as fs from 'fs';
import * as path from 'path';
import { median } from '../util/stats';
import { readMetrics, MetricsRecord } from './metrics';
import { barChart, escapeHtml, formatNumber, lineChart } from './svg';
import { listCheckpoints } from './checkpoint_dir';

/**
 * `ndbg report RUN_DIR`: one self-contained HTML page (inline CSS and SVG, no scripts, no
 * external assets) with the training curves, the run's resolved config and its checkpoints.
 *
 * Extension points for other stages:
 * - Drop JSON files into RUN_DIR/eval/. Each becomes a section: its numeric top-level fields in a
 *   table and every top-level object whose values are all numbers (e.g.
 *   `"per_action": {"step_into": 0.91, ...}`) as a bar chart; `"title"` names the section.
 * - Or pass `sections` (title + HTML, e.g. built with ./svg's barChart/lineChart) to renderReport.
 */
export interface ReportSection {
  title: string;
  html: string;
}

export function renderReport(runDir: string, opts: { sections?: ReportSection[] } = {}): string {
  const metrics = readMetrics(path.join(runDir, 'metrics.jsonl'));
  const config = readJson(path.join(runDir, 'config.json'));
  const sections: ReportSection[] = [
    { title: 'Summary', html: summary(runDir, metrics) },
    { title: 'Training curves', html: curves(metrics) },
    ...evalSections(path.join(runDir, 'eval')),
    ...(opts.sections ?? []),
    {
      title: 'Resolved config',
      html: config === undefined ? '<p>no config.json</p>' : `<pre>${escapeHtml(JSON.stringify(config, null, 2))}</pre>`,
    },
  ];
  return htmlPage(`ndbg run ${path.basename(path.resolve(runDir))}`, sections);
}

/** A standalone HTML page of titled sections, in the look every ndbg report shares (run, scaling). */
export function htmlPage(title: string, sections: ReportSection[], extraCss = ''): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>
body{font-family:sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:.3em}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:.2em .6em;text-align:left}
pre{background:#f6f6f6;padding:1em;overflow:auto;font-size:12px}${extraCss}
</style></head><body>
<h1>${escapeHtml(title)}</h1>
${sections.map((s) => `<section><h2>${escapeHtml(s.title)}</h2>\n${s.html}\n</section>`).join('\n')}
</body></html>
`;
}

export function writeReport(runDir: string, out?: string, opts: { sections?: ReportSection[] } = {}): string {
  const file = out ?? path.join(runDir, 'report.html');
  fs.writeFileSync(file, renderReport(runDir, opts));
  return file;
}

function summary(runDir: string, m: MetricsRecord[]): string {
  const last = m[m.length - 1];
  const vals = m.filter((r) => r.val_loss !== undefined);
  const ckpts = listCheckpoints(runDir);
  const rows: Array<[string, string]> = [
    ['steps logged', String(m.length)],
    ['last step', last ? String(last.step) : '-'],
    ['last train loss', last ? formatNumber(last.loss) : '-'],
    ['last val loss', vals.length ? formatNumber(vals[vals.length - 1].val_loss!) : '-'],
    ['tokens seen', last ? String(last.tokens_seen) : '-'],
    ['median tokens/s', m.length ? formatNumber(median(m.map((r) => r.tokens_per_s))) : '-'],
    ['skipped (NaN/Inf) steps', String(m.filter((r) => r.skipped).length)],
    ['backend', last?.backend ?? '-'],
    ['wall time', last ? `${formatNumber(last.elapsed_s)} s` : '-'],
    ['checkpoints', ckpts.map((c) => path.basename(c.dir)).join(', ') || '-'],
  ];
  return table(rows);
}

function curves(m: MetricsRecord[]): string {
  if (m.length === 0) return '<p>no metrics.jsonl</p>';
  const train = m.filter((r) => !r.skipped).map((r) => [r.step, r.loss] as [number, number]);
  const val = m.filter((r) => r.val_loss !== undefined).map((r) => [r.step, r.val_loss!] as [number, number]);
  return [
    lineChart('Loss (nats/token)', [{ label: 'train', points: train }, { label: 'validation', points: val }], {
      xLabel: 'step',
    }),
    lineChart('Learning rate', [{ label: 'lr', points: m.map((r) => [r.step, r.lr]) }], { xLabel: 'step' }),
    lineChart('Throughput (tokens/s)', [{ label: 'tokens/s', points: m.map((r) => [r.step, r.tokens_per_s]) }], {
      xLabel: 'step',
    }),
    lineChart('Gradient norm (before clipping)', [{ label: 'grad norm', points: m.map((r) => [r.step, r.grad_norm]) }], {
      xLabel: 'step',
    }),
  ].join('\n');
}

function evalSections(dir: string): ReportSection[] {
  if (!fs.existsSync(dir)) return [];
  const out: ReportSection[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const data = readJson(path.join(dir, file));
    if (typeof data !== 'object' || data === null || Array.isArray(data)) continue;
    const obj = data as Record<string, unknown>;
    const scalars: Array<[string, string]> = [];
    const charts: string[] = [];
    for (const [k, v] of Object.entries(obj)) {
      if (typeof v === 'number') scalars.push([k, formatNumber(v)]);
      else if (typeof v === 'string' && k !== 'title') scalars.push([k, v]);
      else if (isNumberMap(v)) charts.push(barChart(k, Object.entries(v)));
    }
    const title = typeof obj.title === 'string' ? obj.title : `Evaluation: ${file}`;
    out.push({ title, html: (scalars.length ? table(scalars) : '') + nextStateTable(obj.tables) + charts.join('\n') });
  }
  return out;
}

interface RateRow {
  n: number;
  programs?: number;
  exitShare?: number;
  full: number;
  src: number;
  ci?: { full: [number, number]; src: [number, number] };
}

/**
 * A next-state JSON's `tables` (predictor → action → rates, eval/score.ts) as one HTML table:
 * per action the tasks, distinct programs and share of exit answers, then per predictor (the
 * model, the rule baseline, the naive one) full frame and SRC with their 95% intervals over
 * programs. Empty for any other JSON.
 */
function nextStateTable(tables: unknown): string {
  if (typeof tables !== 'object' || tables === null) return '';
  const byName = tables as Record<string, Record<string, RateRow>>;
  const names = Object.keys(byName);
  const first = byName[names[0]];
  if (!first || typeof first !== 'object' || !Object.values(first).every((r) => typeof r?.full === 'number')) return '';
  const p = (x: number) => (100 * x).toFixed(1);
  const ci = (c?: [number, number]) => (c ? ` [${p(c[0])}–${p(c[1])}]` : '');
  const head = `<tr><th>action</th><th>tasks</th><th>programs</th><th>exit answers</th>${names.map((n) => `<th>${escapeHtml(n)}: full [95% CI]</th><th>SRC</th>`).join('')}</tr>`;
  const rows = Object.keys(first).map((action) => {
    const r0 = first[action];
    const cells = names.map((n) => {
      const r = byName[n][action];
      return r ? `<td>${p(r.full)}${ci(r.ci?.full)}</td><td>${p(r.src)}${ci(r.ci?.src)}</td>` : '<td>-</td><td>-</td>';
    });
    return `<tr><th>${escapeHtml(action)}</th><td>${r0.n}</td><td>${r0.programs ?? '-'}</td><td>${r0.exitShare === undefined ? '-' : p(r0.exitShare)}</td>${cells.join('')}</tr>`;
  });
  return `<table>${head}${rows.join('')}</table>`;
}

function isNumberMap(v: unknown): v is Record<string, number> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const vals = Object.values(v);
  return vals.length > 0 && vals.every((x) => typeof x === 'number');
}

function table(rows: Array<[string, string]>): string {
  return `<table>${rows.map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`).join('')}</table>`;
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

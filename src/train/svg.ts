/**
 * Minimal inline-SVG charts for the HTML report (no scripts, no external assets), exported so
 * other stages' report sections draw the same way.
 */
export interface Series {
  label: string;
  points: Array<[number, number]>;
  color?: string;
}

const W = 640;
const H = 260;
const PAD = { l: 64, r: 16, t: 28, b: 36 };
const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b'];

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1e5 || a < 1e-3) return v.toExponential(2);
  if (a >= 100) return v.toFixed(0);
  return Number(v.toPrecision(3)).toString();
}

function ticks(lo: number, hi: number, n = 5): number[] {
  if (hi <= lo) return [lo];
  const raw = (hi - lo) / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

/** A line chart of one or more series sharing the axes. Non-finite points are dropped. */
export function lineChart(title: string, series: Series[], opts: { xLabel?: string; yLabel?: string } = {}): string {
  const pts = series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (pts.length === 0) return `<figure><figcaption>${escapeHtml(title)}: no data</figcaption></figure>`;
  let [x0, x1, y0, y1] = [Infinity, -Infinity, Infinity, -Infinity];
  for (const [x, y] of pts) [x0, x1, y0, y1] = [Math.min(x0, x), Math.max(x1, x), Math.min(y0, y), Math.max(y1, y)];
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) [y0, y1] = [y0 - Math.abs(y0 || 1) * 0.05, y1 + Math.abs(y1 || 1) * 0.05];
  const sx = (x: number) => PAD.l + ((x - x0) / (x1 - x0)) * (W - PAD.l - PAD.r);
  const sy = (y: number) => H - PAD.b - ((y - y0) / (y1 - y0)) * (H - PAD.t - PAD.b);
  const parts: string[] = [];
  for (const t of ticks(y0, y1)) {
    parts.push(`<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${PAD.l - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end">${formatNumber(t)}</text>`);
  }
  for (const t of ticks(x0, x1)) {
    parts.push(`<text x="${sx(t).toFixed(1)}" y="${H - PAD.b + 16}" text-anchor="middle">${formatNumber(t)}</text>`);
  }
  parts.push(`<rect x="${PAD.l}" y="${PAD.t}" width="${W - PAD.l - PAD.r}" height="${H - PAD.t - PAD.b}" fill="none" stroke="#999"/>`);
  series.forEach((s, i) => {
    const color = s.color ?? COLORS[i % COLORS.length];
    const p = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (p.length === 1) {
      parts.push(`<circle cx="${sx(p[0][0]).toFixed(1)}" cy="${sy(p[0][1]).toFixed(1)}" r="3" fill="${color}"/>`);
    } else if (p.length > 1) {
      const d = p.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
      parts.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${d}"/>`);
    }
    parts.push(`<text x="${PAD.l + 8 + i * 140}" y="${PAD.t - 10}" fill="${color}">■ ${escapeHtml(s.label)}</text>`);
  });
  if (opts.xLabel) parts.push(`<text x="${W / 2}" y="${H - 4}" text-anchor="middle">${escapeHtml(opts.xLabel)}</text>`);
  if (opts.yLabel) {
    parts.push(`<text transform="translate(12 ${H / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(opts.yLabel)}</text>`);
  }
  return figure(title, parts.join(''));
}

/** A horizontal bar chart, e.g. accuracy per debugger action. */
export function barChart(title: string, bars: Array<[string, number]>, opts: { max?: number } = {}): string {
  if (bars.length === 0) return `<figure><figcaption>${escapeHtml(title)}: no data</figcaption></figure>`;
  const rowH = 22;
  const height = PAD.t + bars.length * rowH + 8;
  const labelW = 170;
  const max = opts.max ?? Math.max(...bars.map(([, v]) => (Number.isFinite(v) ? v : 0)), 1e-12);
  const parts = bars.map(([label, v], i) => {
    const y = PAD.t + i * rowH;
    const w = Number.isFinite(v) ? Math.max(0, (v / max) * (W - labelW - 80)) : 0;
    return (
      `<text x="${labelW - 6}" y="${y + 15}" text-anchor="end">${escapeHtml(label)}</text>` +
      `<rect x="${labelW}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}" fill="${COLORS[0]}"/>` +
      `<text x="${(labelW + w + 6).toFixed(1)}" y="${y + 15}">${formatNumber(v)}</text>`
    );
  });
  return figure(title, parts.join(''), height);
}

function figure(title: string, body: string, height = H): string {
  return (
    `<figure><figcaption>${escapeHtml(title)}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${height}" width="${W}" height="${height}" ` +
    `font-family="sans-serif" font-size="11">${body}</svg></figure>`
  );
}

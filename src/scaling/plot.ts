import { escapeHtml, formatNumber } from '../train/svg';

/**
 * Log-x (and optionally log-y) inline SVG charts for the scaling report: measured cells as dots,
 * fitted curves as lines, in one colour per series. No scripts, no external assets.
 */
export interface PlotSeries {
  label: string;
  color: string;
  dots?: Array<[number, number]>;
  line?: Array<[number, number]>;
  dashed?: boolean;
}

export interface PlotOptions {
  xLabel: string;
  yLabel: string;
  logY?: boolean;
  /** Where the y axis starts (0 for a rate: its height is read from zero); no data lies below it. */
  yMin?: number;
  /** The most the y axis reaches (100 for a percentage), however it is padded. */
  yMax?: number;
  /** Small multiples: a smaller chart without its own legend (a full-size sibling carries it). */
  small?: boolean;
}

export const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

export function logPlot(title: string, series: PlotSeries[], o: PlotOptions): string {
  const W = o.small ? 320 : 680;
  const H = o.small ? 200 : 320;
  const PAD = { l: 64, r: o.small ? 12 : 150, t: 20, b: 40 };
  const all = series.flatMap((s) => [...(s.dots ?? []), ...(s.line ?? [])]).filter(([x, y]) => x > 0 && Number.isFinite(y) && (!o.logY || y > 0));
  if (all.length === 0) return `<figure><figcaption>${escapeHtml(title)}: no data</figcaption></figure>`;
  const fy = (y: number) => (o.logY ? Math.log10(y) : y);
  let x0 = Math.min(...all.map(([x]) => Math.log10(x)));
  let x1 = Math.max(...all.map(([x]) => Math.log10(x)));
  let y0 = Math.min(...all.map(([, y]) => fy(y)));
  let y1 = Math.max(...all.map(([, y]) => fy(y)));
  if (x1 - x0 < 1e-9) [x0, x1] = [x0 - 0.5, x1 + 0.5];
  if (y1 - y0 < 1e-9) [y0, y1] = [y0 - 0.05, y1 + 0.05];
  const padY = (y1 - y0) * 0.05;
  [y0, y1] = [y0 - padY, y1 + padY];
  if (o.yMin !== undefined) y0 = fy(o.yMin);
  if (o.yMax !== undefined) y1 = Math.min(y1, fy(o.yMax));
  const sx = (x: number) => PAD.l + ((Math.log10(x) - x0) / (x1 - x0)) * (W - PAD.l - PAD.r);
  const sy = (y: number) => H - PAD.b - ((fy(y) - y0) / (y1 - y0)) * (H - PAD.t - PAD.b);
  const parts: string[] = [];
  for (let e = Math.ceil(x0); e <= Math.floor(x1); e++) {
    const x = sx(10 ** e);
    parts.push(`<line x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${PAD.t}" y2="${H - PAD.b}" stroke="#eee"/>`);
    parts.push(`<text x="${x.toFixed(1)}" y="${H - PAD.b + 14}" text-anchor="middle">1e${e}</text>`);
  }
  for (let i = 0; i <= 4; i++) {
    const v = y0 + ((y1 - y0) * i) / 4;
    const y = H - PAD.b - (i / 4) * (H - PAD.t - PAD.b);
    parts.push(`<line x1="${PAD.l}" x2="${W - PAD.r}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${PAD.l - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${formatNumber(o.logY ? 10 ** v : v)}</text>`);
  }
  parts.push(`<rect x="${PAD.l}" y="${PAD.t}" width="${W - PAD.l - PAD.r}" height="${H - PAD.t - PAD.b}" fill="none" stroke="#999"/>`);
  const inside = ([x, y]: [number, number]) => x > 0 && Number.isFinite(y) && (!o.logY || y > 0) && fy(y) >= y0 && fy(y) <= y1;
  series.forEach((s, i) => {
    const line = (s.line ?? []).filter(inside);
    if (line.length > 1) {
      const d = line.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
      parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.5"${s.dashed ? ' stroke-dasharray="5 3"' : ''} points="${d}"/>`);
    }
    for (const p of (s.dots ?? []).filter(inside)) parts.push(`<circle cx="${sx(p[0]).toFixed(1)}" cy="${sy(p[1]).toFixed(1)}" r="3.5" fill="${s.color}"/>`);
    if (!o.small) parts.push(`<text x="${W - PAD.r + 8}" y="${PAD.t + 12 + i * 15}" fill="${s.color}">${s.dashed ? '- -' : '●'} ${escapeHtml(s.label)}</text>`);
  });
  parts.push(`<text x="${(PAD.l + W - PAD.r) / 2}" y="${H - 6}" text-anchor="middle">${escapeHtml(o.xLabel)}</text>`);
  parts.push(`<text transform="translate(14 ${H / 2}) rotate(-90)" text-anchor="middle">${escapeHtml(o.yLabel)}</text>`);
  return (
    `<figure${o.small ? ' class="small"' : ''}><figcaption>${escapeHtml(title)}</figcaption>` +
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif" font-size="11">${parts.join('')}</svg></figure>`
  );
}

/** n points spaced evenly in log between lo and hi. */
export function logSpace(lo: number, hi: number, n: number): number[] {
  const a = Math.log(lo);
  const b = Math.log(hi);
  return Array.from({ length: n }, (_, i) => Math.exp(a + ((b - a) * i) / (n - 1)));
}

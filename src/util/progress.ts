/**
 * A one-line progress bar on stderr: `label [#####-----] 50/100 12.3/s eta 4s key=value`.
 * It redraws at most every 100 ms on a TTY and prints a line every 10% otherwise (CI logs).
 */
export class Progress {
  private done = 0;
  private readonly start = Date.now();
  private lastDraw = 0;
  private lastDecile = -1;
  /** What the last non-TTY line showed (count and fields), so finish() does not repeat it. */
  private lastPrinted = '';
  private fields: Record<string, string | number> = {};

  constructor(
    readonly label: string,
    private total: number | undefined,
    private readonly stream: NodeJS.WriteStream = process.stderr,
    private readonly quiet = false,
  ) {}

  tick(n = 1, fields?: Record<string, string | number>): void {
    this.done += n;
    if (fields) Object.assign(this.fields, fields);
    this.draw(false);
  }

  set(fields: Record<string, string | number>): void {
    Object.assign(this.fields, fields);
    this.draw(false);
  }

  /** The total once it is known (e.g. after a time budget is calibrated). */
  setTotal(total: number): void {
    this.total = total;
  }

  finish(fields?: Record<string, string | number>): void {
    if (fields) Object.assign(this.fields, fields);
    this.draw(true);
    if (!this.quiet && this.stream.isTTY) this.stream.write('\n');
  }

  get count(): number {
    return this.done;
  }

  elapsedSeconds(): number {
    return (Date.now() - this.start) / 1000;
  }

  private draw(final: boolean): void {
    if (this.quiet) return;
    const now = Date.now();
    const tty = Boolean(this.stream.isTTY);
    if (tty) {
      if (!final && now - this.lastDraw < 100) return;
    } else if (!final) {
      // Logs: a line per 10% of a known total, else one every 10 s.
      if (!this.total) {
        if (now - this.lastDraw < 10000) return;
      } else {
        const decile = Math.floor((10 * this.done) / this.total);
        if (decile === this.lastDecile) return;
        this.lastDecile = decile;
      }
    }
    const state = `${this.done}|${this.total}|${JSON.stringify(this.fields)}`;
    // In a log, the final line would repeat the last one when nothing happened since.
    if (!tty && final && state === this.lastPrinted) return;
    this.lastDraw = now;
    this.lastPrinted = state;
    const line = this.render();
    this.stream.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
  }

  render(): string {
    const secs = Math.max(this.elapsedSeconds(), 1e-3);
    const rate = this.done / secs;
    const parts = [this.label];
    if (this.total) {
      const frac = Math.min(1, this.done / this.total);
      const width = 20;
      const filled = Math.round(frac * width);
      parts.push(`[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${this.done}/${this.total}`);
      const eta = rate > 0 ? (this.total - this.done) / rate : 0;
      parts.push(`${formatRate(rate)}/s eta ${formatDuration(eta)}`);
    } else {
      parts.push(`${this.done} ${formatRate(rate)}/s`);
    }
    for (const [k, v] of Object.entries(this.fields)) parts.push(`${k}=${v}`);
    return parts.join(' ');
  }
}

function formatRate(r: number): string {
  return r >= 100 ? r.toFixed(0) : r.toFixed(1);
}

export function formatDuration(seconds: number): string {
  if (!isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

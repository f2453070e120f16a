import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { renderReport, writeReport } from '../../src/train/report';
import { lineChart } from '../../src/train/svg';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-report-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function writeRun(): void {
  const lines = Array.from({ length: 20 }, (_, i) => ({
    step: i + 1,
    loss: 5 - i * 0.1,
    lr: 1e-3,
    grad_norm: 1,
    tokens: 100,
    tokens_per_s: 1000 + i,
    tokens_seen: (i + 1) * 100,
    backend: 'cpu',
    step_s: 0.1,
    compute_s: 0.09,
    elapsed_s: (i + 1) * 0.1,
    ...(i % 5 === 4 ? { val_loss: 5.2 - i * 0.1 } : {}),
  }));
  fs.writeFileSync(path.join(dir, 'metrics.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n{"step": 21, "lo');
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model: { d_model: 32 }, note: '<script>x</script>' }));
  fs.mkdirSync(path.join(dir, 'eval'));
  fs.writeFileSync(
    path.join(dir, 'eval', 'next_state.json'),
    JSON.stringify({ title: 'Next-state accuracy', accuracy: 0.75, per_action: { step_into: 0.9, step_over: 0.6 }, rows: [1, 2] }),
  );
}

describe('ndbg report', () => {
  it('renders a self-contained page with curves, config and eval sections', () => {
    writeRun();
    const html = renderReport(dir);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect((html.match(/<svg /g) ?? []).length).toBe(5); // loss, lr, throughput, grad norm, per_action
    expect(html).toContain('Next-state accuracy');
    expect(html).toContain('step_into');
    expect(html).toContain('0.75');
    // Config is shown escaped; nothing is loaded from elsewhere.
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toMatch(/<script|<link|src=|href=|@import|url\(/);
    // The cut-off last line of metrics.jsonl is ignored: 20 steps.
    expect(html).toMatch(/steps logged<\/th><td>20</);
    const file = writeReport(dir);
    expect(fs.readFileSync(file, 'utf8')).toBe(html);
  });

  it('draws a polyline through every finite point', () => {
    const svg = lineChart('t', [{ label: 'a', points: [[1, 1], [2, NaN], [3, 2], [4, 0]] }]);
    const pts = /points="([^"]+)"/.exec(svg)![1].split(' ');
    expect(pts).toHaveLength(3);
  });
});

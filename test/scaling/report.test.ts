import { fitSweep } from '../../src/scaling/fit';
import { initialGrid, predictLoss, type Law } from '../../src/scaling/law';
import { renderScalingReport } from '../../src/scaling/report';
import type { CollectedCell, SweepResults } from '../../src/scaling/sweep_dir';

/** A sweep's collected results whose losses follow a known law exactly: iso-FLOP budgets, 4 sizes. */
function results(law: Law): SweepResults {
  const sizes = [2e5, 5e5, 1.2e6, 3e6];
  const budgets = [3e12, 1e13, 3e13];
  const cells: CollectedCell[] = [];
  for (const [i, N] of sizes.entries())
    for (const C of budgets) {
      const fpt = 6 * N * 1.5;
      const D = C / fpt;
      cells.push({
        id: `m${i}-C${C}-s0`, size: `m${i}`, budget: C, budget_kind: 'flops', seed: 0, steps: 100, tokens_per_step: D / 100, peak_lr: 1e-3, warmup_steps: 5,
        params: N * 1.3, non_embedding_params: N, train_flops_per_token: fpt, planned_tokens: D, planned_flops: C,
        status: 'done', result: { train_loss: 0, final_step_loss: 0, val_loss: predictLoss(law, N, D), steps: 100, tokens: D, flops: C, wall_s: 1 },
      });
    }
  cells.push({ ...cells[0], id: 'pending-one', status: 'pending', result: undefined });
  return { format: 'ndbg-sweep-results/1', name: 'synthetic', counts: { pending: 1, running: 0, done: 12, failed: 0 }, cells };
}

test('the fit and its report: law, intervals, approach 2, compute-optimal table, held-out prediction, inline SVG', () => {
  const law: Law = { E: 1.2, A: 60, B: 900, alpha: 0.3, beta: 0.35 };
  const starts = initialGrid({ alpha: [0.5, 1], beta: [0.5, 1], e: [0, 0.5], a: [5, 10], b: [5, 10] });
  const held = 'm3-C30000000000000-s0';
  const fit = fitSweep(results(law), 'sweeps/synthetic', { loss: 'val', params: 'non_embedding', bootstrap: 8, seed: 1, holdout: held, starts });
  expect(fit.points.length).toBe(11);
  expect(fit.skipped).toEqual([{ id: 'pending-one', why: 'status pending' }]);
  expect(fit.approach3.law.alpha).toBeCloseTo(0.3, 2);
  expect(fit.approach3.law.beta).toBeCloseTo(0.35, 2);
  expect(Math.abs(fit.holdout!.error_pct!)).toBeLessThan(0.5);
  expect(fit.approach2!.slices.length).toBe(3);
  expect(fit.flops_model.p).toBeCloseTo(1, 10);
  const html = renderScalingReport(fit);
  expect(html.startsWith('<!doctype html>')).toBe(true);
  expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
  expect((html.match(/<svg /g) ?? []).length).toBe(3);
  for (const s of ['loss vs training compute', 'compute-optimal frontier', 'iso-FLOP slices', 'α (N exponent)', '0.34', '0.37', 'For a compute budget C', held]) expect(html).toContain(s);
  expect(html).toMatch(/<polyline [^>]*stroke-dasharray/); // the frontier
  expect(() => fitSweep(results(law), 's', { loss: 'val', params: 'total', bootstrap: 2, seed: 0, holdout: 'nope', starts })).toThrow(/--holdout nope: no such cell/);
});

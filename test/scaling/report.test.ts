import { fitSweep } from '../../src/scaling/fit';
import type { CellEval, CellEvalRow } from '../../src/scaling/cell_eval';
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
  expect(fit.next_state).toBeUndefined(); // no cell was evaluated: no accuracy section
  expect(html).not.toContain('Next-state accuracy');
  expect(() => fitSweep(results(law), 's', { loss: 'val', params: 'total', bootstrap: 2, seed: 0, holdout: 'nope', starts })).toThrow(/--holdout nope: no such cell/);
});

/** A cell's eval whose accuracy grows with compute, beside a constant rule baseline. */
function evalOf(C: number, N: number): CellEval {
  const row = (model: number): CellEvalRow => ({ n: 10, programs: 5, did_not_fit: 0, model, model_ci: [model * 0.8, Math.min(1, model * 1.2)], baseline: 0.2 });
  const acc = Math.min(0.95, 0.05 * Math.log10(C * N / 1e16));
  return {
    checkpoint: 'runs/x/checkpoints/step-00000100', step: 100, programs_file: 'held-out.jsonl',
    settings: { programs_sha256: 'f00', max_programs: null, per_program: 1, actions: ['step_into', 'continue'], seed: 0, max_new_tokens: 96, src_constraint: true },
    tasks: 20, programs: 5, did_not_fit: 2, overall: row(acc), per_action: { step_into: row(acc * 1.2), continue: row(acc / 2) }, wall_s: 3,
  };
}

test('cells with a next-state eval: scaling.json carries them and the report draws accuracy vs compute per size', () => {
  const law: Law = { E: 1.2, A: 60, B: 900, alpha: 0.3, beta: 0.35 };
  const starts = initialGrid({ alpha: [0.5, 1], beta: [0.5], e: [0.5], a: [5], b: [5] });
  const r = results(law);
  // Every done cell but one was evaluated (an eval is optional per cell: a sweep may be half evaluated).
  r.cells.forEach((c, i) => {
    if (c.status === 'done' && i !== 4) c.next_state = evalOf(c.planned_flops, c.non_embedding_params);
  });
  const fit = fitSweep(r, 'sweeps/synthetic', { loss: 'val', params: 'non_embedding', bootstrap: 2, seed: 1, starts });
  expect(fit.next_state!.map((e) => e.id)).toEqual(r.cells.filter((c) => c.next_state).map((c) => c.id));
  expect(fit.next_state![0]).toMatchObject({ size: 'm0', N: 2e5, flops: 3e12 });
  const html = renderScalingReport(fit);
  expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
  // The three loss plots, the overall accuracy plot and one small multiple per action.
  expect((html.match(/<svg /g) ?? []).length).toBe(3 + 1 + 2);
  expect(html).toContain('Next-state accuracy vs compute');
  expect(html).toContain('next-state accuracy (all actions) vs training compute, per size');
  const section = html.slice(html.indexOf('Next-state accuracy vs compute'), html.indexOf('<h2>Cells'));
  expect((section.match(/<figure class="small">/g) ?? []).length).toBe(2);
  for (const s of ['<figcaption>step_into</figcaption>', '<figcaption>continue</figcaption>', 'rule baseline', 'm0 (N=2.00e+5)', 'm3 (N=3.00e+6)', '(+2 did not fit)']) expect(section).toContain(s);
  // One series per size (a polyline through its cells), the rule baseline dashed at 20%.
  const overall = section.slice(0, section.indexOf('</figure>'));
  expect((overall.match(/<polyline fill="none" stroke="#(?!000)/g) ?? []).length).toBe(4);
  expect(overall).toMatch(/<polyline fill="none" stroke="#000" stroke-width="1.5" stroke-dasharray="5 3"/);
  expect(overall).toMatch(/<text x="58" y="284.0" text-anchor="end">0<\/text>/); // a rate's axis starts at 0
  expect(section).toContain('<td>m1-C3000000000000-s0</td>');
  expect(section).not.toContain(`<td>${r.cells[4].id}</td>`);
});

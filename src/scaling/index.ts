/** Scaling runs (docs/scaling.md): sweep a grid of sizes × budgets × seeds, fit the laws, report. */
export { loadGrid, GridSchema, type Grid, type Cell, type NextStateEvalSpec } from './grid';
export { partitionCells, cellsOfShard } from './partition';
export { runSweep, type SweepOptions, type SweepOutcome } from './sweep';
export { evaluateCell, type CellEval, type CellEvalRow } from './cell_eval';
export { SweepEvaluator } from './sweep_eval';
export { collectResults, readManifest, RESULTS, type SweepResults, type CollectedCell } from './sweep_dir';
export { fitLaw, bootstrapLaw, predictLoss, huberObjective, initialGrid, type Law, type Point } from './law';
export { lbfgs } from './lbfgs';
export { approach2, fitSlice } from './isoflop';
export { computeOptimal, fitFlopsModel, allocationExponents } from './frontier';
export { fitSweep, PUBLISHED, type ScalingFit, type FitOptions, type EvalPoint } from './fit';
export { renderScalingReport } from './report';

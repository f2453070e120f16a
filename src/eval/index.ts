/**
 * The eval stage (docs/eval.md): next-state accuracy with its naive baseline, CruxEval, the
 * horizon test, and the `ndbg debug` session.
 */
export { evaluateNextState, nextStateReport, formatTables, type NextStateResult } from './next_state';
export { makeTasks, ALL_ACTIONS } from './tasks';
export { NaiveBaseline, OraclePredictor } from './baseline';
export { ModelCompleter, type ModelCompleterOptions } from './model_completer';
export { OracleCompleter } from './oracle_completer';
export { loadCompleter, loadPrograms, type CompleterSpec } from './load';
export { runCruxEval, type CruxEvalOptions, type CruxEvalSummary } from './cruxeval_run';
export { runHorizon, type HorizonOptions } from './horizon';
export { passAtK, meanPassAtK } from './passk';
export { scorePrediction, aggregate } from './score';
export { DebugSession, type DebugSessionOptions } from './session';
export type { FramePredictor, NextStateTask, Prediction } from './types';

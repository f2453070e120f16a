/**
 * The train stage (docs/train.md): `ndbg train` as a function, the loop with its small
 * interfaces, configs, schedules, checkpoints, metrics and the report.
 */
export { trainFromConfig, type TrainFromConfigOptions } from './run';
export { train, type TrainerDeps, type TrainOptions, type TrainSummary } from './trainer';
export type { BatchStream, TrainableModel } from './types';
export { trainStep, evalLoss, type StepResult, type StepOptions } from './step';
export { AdamW } from './adamw';
export { lrAt, type ScheduleConfig } from './schedule';
export { TimeBudget, fitHorizon, type BudgetState } from './time_budget';
export { loadRunConfig, RunConfigSchema, type RunConfig } from './run_config';
export { OptimSchema, TrainSchema, type OptimConfig, type TrainConfig } from './config';
export { latestCheckpoint, listCheckpoints, checkpointsRoot, type CheckpointInfo } from './checkpoint_dir';
export { readMetrics, type MetricsRecord } from './metrics';
export { writeReport, renderReport, type ReportSection } from './report';

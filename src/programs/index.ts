/**
 * The program stage (docs/programs.md): synthetic CruxEval-style programs, their filters,
 * corpus loaders, splits by program and decontamination.
 */
export { generateProgram, type GeneratedProgram } from './generator';
export { generateCorpus, type GenerateOptions, type GenerateSummary } from './pipeline';
export { filterRecords, staticReason, type RecordOutcome } from './filters';
export { codeFacts, type CodeFacts } from './normalize';
export type { ProgramRecord, ProgramRun, Tracer, ClosableTracer } from './types';
export { traceStats, traceFingerprint, type TraceStats } from './tracestats';
export { summarizeTraces, distribution, type TraceSummary } from './summary';
export { loadCruxEvalJsonl, loadPyDirectory, readTextJsonl, pySourceDocuments, parseCall, programRecordProblems, type TextDocument } from './loaders';
export { splitRecords, splitOf, programKey, programKeys, decontaminate, parseFractions, DEFAULT_FRACTIONS, SPLITS, type ProgramSplit, type SplitFractions } from './splits';
export { ProgramsConfigSchema, GeneratorConfigSchema, FilterConfigSchema, defaultProgramsConfig, type ProgramsConfig, type GeneratorConfig, type FilterConfig } from './config';
export { CONSTRUCTS, type Construct } from './ir';

/** The NDL stage: tokens, formatter, sampler, parser and document generation (spec ndl.md). */
export * from './tokens';
export type * from './types';
export { dumpsString, dumpsValue, dumpsEntries, readNdlJson } from './pyjson';
export { buildContext, localsDelta, formatAction, DocumentWriter, formatDocument } from './format';
export { parseDocument, parseNextFrame, preparePrefix } from './parse';
export type { NextFrameResult } from './parse';
export { samplerConfigSchema, defaultSamplerConfig } from './config';
export type { SamplerConfig } from './config';
export { approxTokenCount, actionDistribution, drawAction, sampleDocument, entryCallIndex } from './sampler';
export type { TokenCounter, SampledDocument, SampleOptions } from './sampler';
export { sampleDocuments, allStepDocuments, allStepTrajectory, treeFor, toRecord } from './generate';
export type { NdlRecord } from './generate';
export { verifyDocument, emptyStats } from './verify';
export type { VerifyStats } from './verify';
export { renderDocument } from './show';

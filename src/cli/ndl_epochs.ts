/**
 * How often a run reads its NDL documents. A run that reads them many times over stops learning
 * from them (the 120-minute run of session 10 read its programs about 7 times and its validation
 * loss flattened from the second epoch), so long runs size their data to read each document at
 * most MAX_NDL_EPOCHS times.
 */
import { readManifest } from '../data/manifest';
import { quickstartWeights, DEFAULT_MINED_SHARE } from './quickstart_options';

/** The NDL source's share of the rows at the quickstart's default mixture. */
const DEFAULT_NDL_SHARE = quickstartWeights(DEFAULT_MINED_SHARE).ndl;

export const MAX_NDL_EPOCHS = 2;

/**
 * NDL training tokens per generated program at the quickstart's defaults (2 documents per
 * program, the program config's sizes; measured with 8: 19.13M tokens from 7,000 programs, of
 * which ~90% land in the train split, so about 2,700 per program, 675 at 2). Only a first
 * guess: the learning bench checks the built data.
 */
export const NDL_TOKENS_PER_PROGRAM = 675;

/** The NDL source's training tokens in a data set built by the quickstart. */
export function ndlTrainTokens(dataDir: string): number {
  const ndl = readManifest(dataDir).sources.find((s) => s.name === 'ndl');
  if (!ndl?.train) throw new Error(`${dataDir}: the data set has no ndl source`);
  return ndl.train.tokens;
}

/** Epochs of the NDL documents that `tokens` training tokens read, with the NDL source's share of the rows. */
export function ndlEpochs(ndlTokens: number, tokens: number, ndlShare = DEFAULT_NDL_SHARE): number {
  return (tokens * ndlShare) / Math.max(ndlTokens, 1);
}

/**
 * Programs to generate so that `tokens` training tokens read each NDL document at most
 * MAX_NDL_EPOCHS times, given `perProgram` NDL tokens per generated program; at least `floor`.
 */
export function programsFor(tokens: number, perProgram: number, floor: number, ndlShare = DEFAULT_NDL_SHARE): number {
  const needed = Math.ceil((tokens * ndlShare) / MAX_NDL_EPOCHS / perProgram);
  // 5% above the estimate, so that a slightly shorter draw still stays within the limit.
  return Math.max(floor, Math.ceil(needed * 1.05));
}

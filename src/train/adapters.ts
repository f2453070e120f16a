import { cropBatch, type TokenBatch } from '../data/batch';
import { loaderOptions, validationOptions } from '../data/config';
import { modelStats, ModelConfig } from '../model/config';
import type { LlamaModel } from '../model/model';
import { MixtureLoader, type LoaderState } from '../data/loader';
import { ValidationStream } from '../data/validation';
import type { BatchStream, TrainableModel } from './types';
import type { RunConfig } from './run_config';

/**
 * Bridges from src/model and src/data to the trainer's small interfaces (./types.ts).
 * Batches pass through as the loader makes them (TokenBatch), cropped to seqLen+1 tokens per
 * row when the config trains on shorter rows than the data's.
 */
export function trainableLlama(model: LlamaModel, config: ModelConfig, seqLen: number): TrainableModel {
  const params = [...model.trainableVariables()].map(([name, variable]) => ({ name, variable }));
  return {
    params,
    flopsPerToken: modelStats(config, seqLen).trainFlopsPerToken,
    lossSum: (b: TokenBatch) => model.lossSum(b),
    getWeights: () => model.getWeights(),
    setWeights: (weights) => model.setWeights(weights),
  };
}

export function dataStreams(cfg: RunConfig, seqLen: number, tokenizerSha256: string) {
  const settings = { batchSize: cfg.train.micro_batch_size, seed: cfg.train.seed, tokenizerSha256 };
  return {
    openTrainStream(state?: unknown): BatchStream {
      const loader = new MixtureLoader(loaderOptions(cfg.data, settings), state as LoaderState | undefined);
      return {
        next: () => cropBatch(loader.next(), seqLen),
        state: () => loader.state(),
      };
    },
    validationBatches(count: number): TokenBatch[] {
      const val = new ValidationStream(validationOptions(cfg.data, settings));
      const out: TokenBatch[] = [];
      for (const b of val.batches()) {
        if (out.length >= count) break;
        out.push(cropBatch(b, seqLen));
      }
      return out;
    },
  };
}

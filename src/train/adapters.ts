import { cropBatch, type TokenBatch } from '../data/batch';
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
    getWeights() {
      return new Map([...model.getWeights()].map(([k, v]) => [k, v.data]));
    },
    setWeights(weights) {
      const shapes = new Map(params.map((p) => [p.name, p.variable.shape]));
      model.setWeights(new Map([...weights].map(([k, data]) => [k, { shape: shapes.get(k) ?? [data.length], data }])));
    },
  };
}

export function dataStreams(cfg: RunConfig, seqLen: number, tokenizerSha256: string) {
  const d = cfg.data;
  const loaderOptions = {
    datasets: d.datasets,
    weights: d.weights,
    batchSize: cfg.train.micro_batch_size,
    seed: cfg.train.seed,
    shuffleWindow: d.shuffle_window,
    verifySha256: d.verify_sha256,
    tokenizerSha256,
  };
  return {
    openTrainStream(state?: unknown): BatchStream {
      const loader = new MixtureLoader(loaderOptions, state as LoaderState | undefined);
      return {
        next: () => cropBatch(loader.next(), seqLen),
        state: () => loader.state(),
      };
    },
    validationBatches(count: number): TokenBatch[] {
      const val = new ValidationStream({
        datasets: d.datasets,
        batchSize: cfg.train.micro_batch_size,
        maxRowsPerSource: d.val_max_rows_per_source,
        verifySha256: d.verify_sha256,
        tokenizerSha256,
      });
      const out: TokenBatch[] = [];
      for (const b of val.batches()) {
        if (out.length >= count) break;
        out.push(cropBatch(b, seqLen));
      }
      return out;
    },
  };
}

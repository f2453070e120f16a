import * as tf from '@tensorflow/tfjs-core';
import { modelStats, ModelConfig } from '../model/config';
import type { LlamaModel } from '../model/model';
import { MixtureLoader, type LoaderState } from '../data/loader';
import { ValidationStream } from '../data/validation';
import type { Batch, BatchStream, TrainableModel } from './types';
import { countTokens } from './types';
import type { RunConfig } from './run_config';

/**
 * Bridges from src/model and src/data to the trainer's small interfaces (./types.ts).
 * Rows are cropped to seqLen+1 tokens when the config trains on shorter rows than the data's.
 */
export function trainableLlama(model: LlamaModel, config: ModelConfig, seqLen: number): TrainableModel {
  const params = [...model.trainableVariables()].map(([name, variable]) => ({ name, variable }));
  return {
    params,
    flopsPerToken: modelStats(config, seqLen).trainFlopsPerToken,
    lossSum(b: Batch): tf.Scalar {
      const w = b.seqLen + 1;
      const ids: Int32Array[] = [];
      const lossMask: Float32Array[] = [];
      const docIds: Int32Array[] = [];
      for (let r = 0; r < b.batchSize; r++) {
        ids.push(b.ids.subarray(r * w, (r + 1) * w));
        lossMask.push(Float32Array.from(b.lossMask.subarray(r * w + 1, (r + 1) * w), (x) => (x ? 1 : 0)));
        if (b.docIds) docIds.push(b.docIds.subarray(r * w, (r + 1) * w));
      }
      // The model's loss is the mask-weighted mean; × token count gives the sum the trainer
      // accumulates (so micro-batches with different token counts weigh correctly).
      const n = countTokens(b);
      return tf.tidy(() => tf.mul(model.loss({ ids, lossMask, docIds: b.docIds ? docIds : undefined }), n) as tf.Scalar);
    },
    getWeights() {
      return new Map([...model.getWeights()].map(([k, v]) => [k, v.data]));
    },
    setWeights(weights) {
      const shapes = new Map(params.map((p) => [p.name, p.variable.shape]));
      model.setWeights(new Map([...weights].map(([k, data]) => [k, { shape: shapes.get(k) ?? [data.length], data }])));
    },
  };
}

/** Copies rows of width `from` (T_data+1) into rows of width seqLen+1, keeping the row starts. */
function crop<A extends Int32Array | Uint8Array>(src: A, rows: number, from: number, to: number, make: (n: number) => A): A {
  if (from === to) return src;
  const out = make(rows * to);
  for (let r = 0; r < rows; r++) out.set(src.subarray(r * from, r * from + to), r * to);
  return out;
}

function toBatch(rows: number, rowLen: number, tokens: Int32Array, mask: Uint8Array, docIds: Int32Array, seqLen: number): Batch {
  const w = seqLen + 1;
  return {
    batchSize: rows,
    seqLen,
    ids: crop(tokens, rows, rowLen, w, (n) => new Int32Array(n)),
    lossMask: crop(mask, rows, rowLen, w, (n) => new Uint8Array(n)),
    docIds: crop(docIds, rows, rowLen, w, (n) => new Int32Array(n)),
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
        next: () => {
          const b = loader.next();
          return toBatch(b.batchSize, b.rowLen, b.tokens, b.lossMask, b.docIds, seqLen);
        },
        state: () => loader.state(),
      };
    },
    validationBatches(count: number): Batch[] {
      const val = new ValidationStream({
        datasets: d.datasets,
        batchSize: cfg.train.micro_batch_size,
        maxRowsPerSource: d.val_max_rows_per_source,
        verifySha256: d.verify_sha256,
        tokenizerSha256,
      });
      const out: Batch[] = [];
      for (const b of val.batches()) {
        if (out.length >= count) break;
        out.push(toBatch(b.rows, b.rowLen, b.tokens, b.lossMask, b.docIds, seqLen));
      }
      return out;
    },
  };
}

import { initBackend, BackendChoice } from '../model/backend';
import { LlamaModel } from '../model/model';
import { dataStreams, trainableLlama } from './adapters';
import { loadRunConfig } from './run_config';
import { train, TrainSummary } from './trainer';

/**
 * `ndbg train` as a function: config file + overrides → validated run config (fails here, before
 * any model exists) → backend → model → data streams → the loop. The CLI and the benchmark call it.
 */
export interface TrainFromConfigOptions {
  config?: string;
  overrides: string[];
  runDir: string;
  resume: boolean;
  quiet?: boolean;
  log?: (line: string) => void;
}

export async function trainFromConfig(o: TrainFromConfigOptions): Promise<TrainSummary & { backend: string }> {
  const run = loadRunConfig(o.config, o.overrides);
  const backend = await initBackend(run.config.train.backend as BackendChoice, o.log);
  const llama = LlamaModel.create(run.model, run.config.train.seed);
  try {
    const streams = dataStreams(run.config, run.seqLen, run.manifest.tokenizer.sha256);
    const summary = await train(
      {
        model: trainableLlama(llama, run.model, run.seqLen),
        openTrainStream: streams.openTrainStream,
        validationBatches: streams.validationBatches,
        backend: backend.choice,
        resolvedConfig: run.config as unknown as Record<string, unknown>,
        tokenizer: run.manifest.tokenizer,
      },
      { runDir: o.runDir, train: run.config.train, optim: run.config.optim, resume: o.resume, quiet: o.quiet, log: o.log },
    );
    return { ...summary, backend: backend.choice };
  } finally {
    llama.dispose();
  }
}

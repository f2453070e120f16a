import { initBackend, BackendChoice } from '../backend/backend';
import { LlamaModel } from '../model/model';
import { dataStreams, trainableLlama } from './adapters';
import { loadInitWeights } from './init_from';
import { CHECKPOINT_SEQ_LEN_KEY } from '../model/checkpoint';
import { loadRunConfig, type ResolvedRun } from './run_config';
import { train, TrainSummary } from './trainer';
import { writeAveragedCheckpoint, type AveragedRecord } from './average';

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

/**
 * The run's config.json (run dir and every checkpoint): the resolved config, the context T it
 * trains at (what eval fits prompts to), and where the initial weights came from.
 */
function recordedConfig(run: ResolvedRun, initRecord: unknown): Record<string, unknown> {
  const config: Record<string, unknown> = { ...run.config, [CHECKPOINT_SEQ_LEN_KEY]: run.seqLen };
  if (initRecord !== undefined) config.init_from = initRecord;
  return config;
}

export async function trainFromConfig(o: TrainFromConfigOptions): Promise<TrainSummary & { backend: string; averaged?: { dir: string } & AveragedRecord }> {
  const run = loadRunConfig(o.config, o.overrides);
  // Read before any backend or model exists, so a bad train.init_from fails first.
  const init = run.config.train.init_from ? loadInitWeights(run.config.train.init_from, run.model) : undefined;
  const backend = await initBackend(run.config.train.backend as BackendChoice, o.log);
  const llama = LlamaModel.create(run.model, run.config.train.seed);
  if (init) llama.setWeights(init.weights);
  try {
    const streams = dataStreams(run.config, run.seqLen, run.manifest.tokenizer.sha256);
    const summary = await train(
      {
        model: trainableLlama(llama, run.model, run.seqLen),
        openTrainStream: streams.openTrainStream,
        validationBatches: streams.validationBatches,
        backend: backend.choice,
        resolvedConfig: recordedConfig(run, init?.record),
        tokenizer: run.manifest.tokenizer,
      },
      { runDir: o.runDir, train: run.config.train, optim: run.config.optim, resume: o.resume, quiet: o.quiet, log: o.log },
    );
    // A run a signal stopped is not over: its average waits for the resumed run's end.
    const averageLast = run.config.train.average_last;
    const averaged = averageLast > 1 && !summary.stoppedBySignal ? writeAveragedCheckpoint(o.runDir, averageLast) : undefined;
    return { ...summary, backend: backend.choice, averaged };
  } finally {
    llama.dispose();
  }
}

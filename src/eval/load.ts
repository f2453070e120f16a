/**
 * What the eval commands share: turning `--checkpoint`/`--oracle` into a TextCompleter, reading
 * programs and tracing them in the sandbox, and choosing where results go.
 */
import * as fs from 'fs';
import * as path from 'path';
import { BackendChoice, initBackend } from '../backend/backend';
import { checkpointTokenizerPath, loadModelFromCheckpoint } from '../model/checkpoint';
import { loadCruxEvalJsonl } from '../programs/loaders';
import { Tokenizer } from '../tokenizer';
import { traceBatch } from '../trace';
import type { ProgramRecord, TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { replaceFileAtomic } from '../util/fsync';
import { Progress } from '../util/progress';
import type { TextCompleter } from './completer';
import { DecodePool } from './decode_pool';
import { DEFAULT_MAX_NEW_TOKENS, ModelCompleter } from './model_completer';
import { OracleCompleter } from './oracle_completer';

export interface CompleterSpec {
  checkpoint?: string;
  /** Use the true next frames (validates the harness; must score 100%). */
  oracle?: boolean;
  backend?: BackendChoice;
  maxNewTokens?: number;
  /** Free SRC decoding when false (see src_constraint.ts); default true. */
  constrainSrc?: boolean;
  /** Decoding free of the frame grammar when false (see frame_grammar.ts); default true. */
  constrainFrame?: boolean;
  /** Most single steps a walked jump takes (model_completer.ts); 0 answers jumps in one shot. */
  walkSteps?: number;
  /** Beam search with this many beams where decoding is not sampled; default DEFAULT_BEAMS (1: greedy). */
  beams?: number;
  /** Prompts decoded together by a model (model_completer.ts DEFAULT_BATCH_SIZE). */
  batchSize?: number;
  /** Worker processes that decode many prompts side by side on a CPU backend (decode_pool.ts); default 1, none. */
  decodeWorkers?: number;
}

export async function loadCompleter(spec: CompleterSpec, traces: TraceRecord[]): Promise<TextCompleter> {
  if (spec.oracle) return new OracleCompleter(new Map(traces.map((t) => [t.id, t])));
  if (!spec.checkpoint) throw new UserError('give --checkpoint DIR (a trained model) or --oracle (the true next states)');
  return loadModelCompleter({ ...spec, checkpoint: spec.checkpoint });
}

/** The model of a checkpoint with its tokenizer, on the chosen backend. */
export async function loadModelCompleter(spec: CompleterSpec & { checkpoint: string }): Promise<ModelCompleter> {
  if (!fs.existsSync(path.join(spec.checkpoint, 'model.safetensors'))) {
    throw new UserError(`--checkpoint ${spec.checkpoint}: no model.safetensors there (pass a checkpoint directory, e.g. RUN/checkpoints/step-000100)`);
  }
  const backend = await initBackend(spec.backend ?? 'auto');
  const { model, seqLen } = loadModelFromCheckpoint(spec.checkpoint);
  const tokenizerFile = checkpointTokenizerPath(spec.checkpoint);
  if (!tokenizerFile) throw new UserError(`--checkpoint ${spec.checkpoint}: no tokenizer recorded (tokenizer.model or state.json "tokenizer")`);
  const tokenizer = await Tokenizer.load(tokenizerFile);
  if (tokenizer.vocabSize !== model.config.vocab_size) {
    throw new UserError(`tokenizer ${tokenizerFile} has ${tokenizer.vocabSize} ids but the model in ${spec.checkpoint} expects ${model.config.vocab_size}`);
  }
  // Prompts are fitted to the context the checkpoint was trained at, not to max_seq_len.
  const options = { maxNewTokens: spec.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS, constrainSrc: spec.constrainSrc, constrainFrame: spec.constrainFrame, walkSteps: spec.walkSteps, beams: spec.beams, batchSize: spec.batchSize, seqLen };
  return new ModelCompleter(model, tokenizer, options, decodePool(spec, spec.checkpoint, backend.choice));
}

/** Decode workers where asked for and where they help: a GPU runs one process's batches already in parallel. */
function decodePool(spec: CompleterSpec, checkpoint: string, backend: string): DecodePool | undefined {
  const workers = spec.decodeWorkers ?? 1;
  if (!(Number.isInteger(workers) && workers >= 1)) throw new UserError(`--decode-workers ${workers}: expected a whole number >= 1`);
  return workers > 1 && backend !== 'tensorflow-gpu' ? new DecodePool({ checkpoint, backend }, workers) : undefined;
}

/** Programs from a CruxEval-style JSONL file, optionally the first `limit`. */
export async function loadPrograms(file: string, limit?: number): Promise<ProgramRecord[]> {
  if (!fs.existsSync(file)) throw new UserError(`--programs ${file}: no such file`);
  const programs = await loadCruxEvalJsonl(file);
  return limit && limit > 0 ? programs.slice(0, limit) : programs;
}

/**
 * Results go to --out when given; else, for a checkpoint inside a run (RUN/checkpoints/NAME),
 * to RUN/eval so that `ndbg report RUN` shows them; else next to the checkpoint.
 */
export function resultsDir(out: string | undefined, checkpoint: string | undefined): string {
  let dir = out;
  if (!dir && checkpoint) {
    // RUN/checkpoints/step-N and RUN/averaged (train.average_last) write to RUN/eval; anything else beside itself.
    const ck = path.resolve(checkpoint);
    const run = [path.dirname(path.dirname(ck)), path.dirname(ck)].find((d) => fs.existsSync(path.join(d, 'metrics.jsonl')));
    dir = run ? path.join(run, 'eval') : path.join(checkpoint, 'eval');
  }
  dir = dir ?? 'eval-results';
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

export function writeJson(file: string, value: unknown): void {
  replaceFileAtomic(file, JSON.stringify(value, null, 2) + '\n');
}

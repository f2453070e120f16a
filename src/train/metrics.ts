import * as fs from 'fs';
import * as path from 'path';
import { JsonlWriter } from '../util/jsonl';
import { replaceFileAtomic } from '../util/fsync';
import { TensorBoardWriter, trainingScalars } from './tensorboard';

/**
 * RUN_DIR/metrics.jsonl: one line per optimizer step (step is 1-based: the number of updates
 * done, so the line for step s matches checkpoint step-s). val_loss appears on the lines of the
 * steps where validation ran.
 */
export interface MetricsRecord {
  step: number;
  loss: number;
  lr: number;
  grad_norm: number;
  tokens: number;
  tokens_per_s: number;
  tokens_seen: number;
  backend: string;
  /** Seconds for the whole step and for forward+backward+optimizer only. */
  step_s: number;
  compute_s: number;
  elapsed_s: number;
  mfu?: number;
  skipped?: boolean;
  val_loss?: number;
}

export function readMetrics(file: string): MetricsRecord[] {
  if (!fs.existsSync(file)) return [];
  const out: MetricsRecord[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const rec = JSON.parse(line) as MetricsRecord;
      if (typeof rec.step === 'number') out.push(rec);
    } catch {
      // A line cut short by a hard kill: the step it described is replayed after resume.
    }
  }
  return out;
}

/**
 * After resuming from checkpoint `step`, the log must not keep lines of steps that are about to
 * be replayed (they were written after the checkpoint by the process that died).
 */
export function truncateMetrics(file: string, step: number): void {
  if (!fs.existsSync(file)) return;
  const kept = readMetrics(file).filter((r) => r.step <= step);
  replaceFileAtomic(file, kept.map((r) => JSON.stringify(r) + '\n').join(''));
}

/** metrics.jsonl, plus TensorBoard scalars in the same directory when `tensorboard` is on (train.tensorboard). */
export class MetricsLog {
  private readonly writer: JsonlWriter;
  private readonly tb?: TensorBoardWriter;
  constructor(readonly file: string, opts: { tensorboard?: boolean } = {}) {
    this.writer = new JsonlWriter(file, true);
    if (opts.tensorboard) this.tb = new TensorBoardWriter(path.dirname(file));
  }
  write(rec: MetricsRecord): void {
    this.writer.write(rec);
    this.tb?.scalars(rec.step, trainingScalars(rec));
  }
  close(): void {
    this.writer.close();
    this.tb?.close();
  }
}

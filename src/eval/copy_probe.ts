/**
 * The copy probe: does a model copy from its context at all? A neural debugger predicts SRC by
 * finding the line in the program it was given and copying it, which takes induction heads
 * (attend to the token after the previous occurrence of the current one). Whether those have
 * formed cannot be read off next-state accuracy (a model without them still gets EVT and many
 * lines from token statistics), so the probe measures it directly: sequences of random ordinary
 * pieces, each written twice after BOS. A model that copies predicts the second copy far better
 * than the first (Olsson et al. 2022, "In-context learning and induction heads"); one that does
 * not scores both at chance.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { LlamaModel } from '../model/model';
import type { Tokenizer } from '../tokenizer';
import { longestRow } from './budget';
import { Rng } from '../util/rng';

/** Log-probabilities [T][V] of the next token at each position of one sequence. */
export type NextTokenLogProbs = (ids: Int32Array) => Float32Array[];

export interface CopyProbeOptions {
  seed: number;
  /** Sequences drawn. */
  sequences: number;
  /** Pieces per copy; the probe's rows hold 1 + 2·length ids, of which the model reads all but the last. */
  length: number;
  bosId: number;
  /** Ids the random pieces are drawn from (ordinary pieces: no NDL tokens, no byte pieces). */
  pieceIds: readonly number[];
}

export interface CopyProbeResult {
  sequences: number;
  length: number;
  /** Mean next-token NLL (nats) over the first copy: chance level, the reference. */
  nllFirst: number;
  /** The same over the second copy, from its second token on (its first is not predictable). */
  nllRepeat: number;
  /** Greedy top-1 accuracy over those second-copy positions. */
  repeatAccuracy: number;
}

/** The probe's token rows: BOS, a random sequence, the same sequence again. */
export function copyProbeRows(o: CopyProbeOptions): Int32Array[] {
  if (o.pieceIds.length < 2) throw new Error('copy probe: need at least 2 piece ids to draw from');
  const rng = Rng.from(o.seed, 'copy-probe');
  return Array.from({ length: o.sequences }, () => {
    const seq = Array.from({ length: o.length }, () => o.pieceIds[Math.floor(rng.next() * o.pieceIds.length)]);
    return Int32Array.from([o.bosId, ...seq, ...seq]);
  });
}

export function runCopyProbe(logProbs: NextTokenLogProbs, o: CopyProbeOptions): CopyProbeResult {
  let first = 0;
  let repeat = 0;
  let hits = 0;
  let nFirst = 0;
  let nRepeat = 0;
  for (const ids of copyProbeRows(o)) {
    // The last id is only a target (as in a training row): the model reads the others.
    const lp = logProbs(ids.subarray(0, ids.length - 1));
    // Position t predicts ids[t + 1]; the first copy is ids[1..L], the second ids[L+1..2L].
    for (let t = 0; t + 1 < ids.length; t++) {
      const target = ids[t + 1];
      const nll = -lp[t][target];
      if (t + 1 <= o.length) {
        first += nll;
        nFirst++;
      } else if (t + 1 >= o.length + 2) {
        repeat += nll;
        nRepeat++;
        if (argmax(lp[t]) === target) hits++;
      }
    }
  }
  return { sequences: o.sequences, length: o.length, nllFirst: first / nFirst, nllRepeat: repeat / nRepeat, repeatAccuracy: hits / nRepeat };
}

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/** One line for logs, e.g. `copy probe: repeat top-1 3.1%, NLL 7.52 → 7.49 nats (no copying yet)`. */
export function formatCopyProbe(r: CopyProbeResult): string {
  const verdict = r.repeatAccuracy >= 0.5 ? 'it copies from its context' : r.repeatAccuracy >= 0.1 ? 'copying is forming' : 'no copying yet';
  return `copy probe (${r.sequences} random sequences of ${r.length} pieces, each twice): repeat top-1 ${(100 * r.repeatAccuracy).toFixed(1)}%, NLL first copy ${r.nllFirst.toFixed(2)} → repeat ${r.nllRepeat.toFixed(2)} nats (${verdict})`;
}

/** A model's next-token log-probabilities for one row (a full forward pass, no KV cache). */
export function modelLogProbs(model: LlamaModel): NextTokenLogProbs {
  return (ids) => {
    const lp = tf.tidy(() => tf.logSoftmax(tf.squeeze(model.logits([ids]), [0]))) as tf.Tensor2D;
    const flat = lp.dataSync() as Float32Array;
    const [T, V] = lp.shape;
    lp.dispose();
    return Array.from({ length: T }, (_, t) => flat.subarray(t * V, (t + 1) * V));
  };
}

/** The tokenizer's ordinary pieces: not NDL/document tokens (`<|…|>`), byte pieces (`<0x..>`) or `<unk>`. */
export function ordinaryPieceIds(tokenizer: Tokenizer): number[] {
  const ids: number[] = [];
  for (let id = 0; id < tokenizer.vocabSize; id++) if (!/^<.*>$/.test(tokenizer.pieceOf(id))) ids.push(id);
  return ids;
}

export const DEFAULT_COPY_PROBE = { seed: 0, sequences: 16, length: 48 };

/**
 * The probe with its defaults on a model and its tokenizer. The length is capped so that a
 * probe row (1 + 2·length ids) fits the context `seqLen` (budget.ts fitsRow; default: the
 * model's max_seq_len, for a checkpoint its trained context).
 */
export function copyProbeOf(model: LlamaModel, tokenizer: Tokenizer, o: Partial<typeof DEFAULT_COPY_PROBE> = {}, seqLen = model.config.max_seq_len): CopyProbeResult {
  const opts = { ...DEFAULT_COPY_PROBE, ...o };
  const length = Math.min(opts.length, Math.floor((longestRow({ seqLen }) - 1) / 2));
  return runCopyProbe(modelLogProbs(model), { ...opts, length, bosId: tokenizer.bosId, pieceIds: ordinaryPieceIds(tokenizer) });
}

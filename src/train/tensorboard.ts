import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * TensorBoard scalars in the standard event-file format, written by hand (no TensorFlow): a file
 * `events.out.tfevents.<seconds>.<host>.<pid>.<n>` of TFRecord frames, each
 *   u64 length | u32 masked crc32c(length bytes) | Event bytes | u32 masked crc32c(Event bytes)
 * (little-endian), holding serialized `tensorflow.Event` protobufs: the first carries
 * file_version "brain.Event:2", the others a `Summary` of simple_value scalars at a step.
 * Readers (TensorBoard, its EventAccumulator, tf.data) need nothing else.
 *
 * Every event is one write(2) of whole frames, so a crash leaves at most a truncated last
 * frame, which readers skip.
 */

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), as TFRecord uses. */
export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC32C_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: rotate right by 15 and add a constant (so CRCs of CRCs stay distinct). */
export function maskedCrc32c(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return (((c >>> 15) | (c << 17)) + 0xa282ead8) >>> 0;
}

/** One TFRecord frame around `data`. */
export function tfRecordFrame(data: Uint8Array): Buffer {
  const out = Buffer.alloc(8 + 4 + data.length + 4);
  out.writeBigUInt64LE(BigInt(data.length), 0);
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8);
  Buffer.from(data.buffer, data.byteOffset, data.byteLength).copy(out, 12);
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length);
  return out;
}

// --- protobuf wire format, only what Event/Summary need -----------------------------------------

function varint(n: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return out;
}

const key = (field: number, wire: number) => varint((field << 3) | wire);

function lengthDelimited(field: number, bytes: Uint8Array): number[] {
  return [...key(field, 2), ...varint(bytes.length), ...bytes];
}

function double(field: number, v: number): number[] {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v);
  return [...key(field, 1), ...b];
}

function float(field: number, v: number): number[] {
  const b = Buffer.alloc(4);
  b.writeFloatLE(v);
  return [...key(field, 5), ...b];
}

/** tensorflow.Event: wall_time = 1 (double), step = 2 (int64), file_version = 3, summary = 5. */
export function encodeEvent(e: { wallTime: number; step?: number; fileVersion?: string; scalars?: Record<string, number> }): Uint8Array {
  const bytes: number[] = [...double(1, e.wallTime)];
  if (e.step !== undefined) bytes.push(...key(2, 0), ...varint(e.step));
  if (e.fileVersion !== undefined) bytes.push(...lengthDelimited(3, Buffer.from(e.fileVersion, 'utf8')));
  if (e.scalars) {
    // Summary { repeated Value value = 1 }, Value { string tag = 1; float simple_value = 2 }.
    const summary: number[] = [];
    for (const [tag, v] of Object.entries(e.scalars)) {
      const value = [...lengthDelimited(1, Buffer.from(tag, 'utf8')), ...float(2, v)];
      summary.push(...lengthDelimited(1, Uint8Array.from(value)));
    }
    bytes.push(...lengthDelimited(5, Uint8Array.from(summary)));
  }
  return Uint8Array.from(bytes);
}

let fileCounter = 0;

/** Appends scalar events to a new event file in `dir` (one file per writer, as TensorFlow does). */
export class TensorBoardWriter {
  readonly file: string;
  private fd: number;

  constructor(dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    const name = `events.out.tfevents.${Math.floor(Date.now() / 1000)}.${os.hostname()}.${process.pid}.${fileCounter++}`;
    this.file = path.join(dir, name);
    this.fd = fs.openSync(this.file, 'a');
    fs.writeSync(this.fd, tfRecordFrame(encodeEvent({ wallTime: Date.now() / 1000, fileVersion: 'brain.Event:2' })));
  }

  /** Writes the finite values of `scalars` as one event at `step`. */
  scalars(step: number, scalars: Record<string, number | undefined>, wallTime = Date.now() / 1000): void {
    const finite = Object.fromEntries(Object.entries(scalars).filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1])));
    if (Object.keys(finite).length === 0) return;
    fs.writeSync(this.fd, tfRecordFrame(encodeEvent({ wallTime, step, scalars: finite })));
  }

  close(): void {
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
  }
}

/** The training scalars of one metrics.jsonl line, under TensorBoard tags. */
export function trainingScalars(r: { loss: number; lr: number; grad_norm: number; tokens_per_s: number; val_loss?: number; mfu?: number }): Record<string, number | undefined> {
  return {
    'train/loss': r.loss,
    'train/lr': r.lr,
    'train/grad_norm': r.grad_norm,
    'train/tokens_per_s': r.tokens_per_s,
    'train/mfu': r.mfu,
    'val/loss': r.val_loss,
  };
}

/**
 * The numeric leaves of an evaluation result (e.g. next_state.json) as `prefix/a/b` tags; arrays
 * and deep nesting are skipped, so a results file becomes a small set of curves.
 */
export function numericLeaves(value: unknown, prefix: string, depth = 3): Record<string, number> {
  const out: Record<string, number> = {};
  const walk = (v: unknown, tag: string, d: number) => {
    if (typeof v === 'number' && Number.isFinite(v)) out[tag] = v;
    else if (v && typeof v === 'object' && !Array.isArray(v) && d > 0) {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) walk(x, `${tag}/${k}`, d - 1);
    }
  };
  walk(value, prefix, depth);
  return out;
}

/**
 * Evaluation results of a checkpoint `RUN/checkpoints/step-N` as scalars `eval/NAME/...` at step N
 * in RUN's event files, when that run logs to TensorBoard (train.tensorboard in RUN/config.json).
 * Returns the event file written, or undefined when the run does not log to TensorBoard.
 */
export function writeEvalScalars(checkpoint: string | undefined, name: string, result: unknown): string | undefined {
  if (!checkpoint) return undefined;
  const ck = path.resolve(checkpoint);
  if (path.basename(path.dirname(ck)) !== 'checkpoints') return undefined;
  const runDir = path.dirname(path.dirname(ck));
  let step: unknown;
  try {
    const cfg = JSON.parse(fs.readFileSync(path.join(runDir, 'config.json'), 'utf8')) as { train?: { tensorboard?: unknown } };
    if (cfg.train?.tensorboard !== true) return undefined;
    step = (JSON.parse(fs.readFileSync(path.join(ck, 'state.json'), 'utf8')) as { step?: unknown }).step;
  } catch {
    return undefined;
  }
  if (typeof step !== 'number') return undefined;
  const w = new TensorBoardWriter(runDir);
  try {
    w.scalars(step, numericLeaves(result, `eval/${name}`, 4));
  } finally {
    w.close();
  }
  return w.file;
}

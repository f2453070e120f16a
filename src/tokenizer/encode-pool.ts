import { Worker } from 'worker_threads';
import { assetPath } from '../util/paths';

/**
 * A fixed set of worker threads, each with its own sentencepiece instance, that encodes
 * batches of (already escaped) texts. Texts are grouped into jobs of about `jobChars`
 * characters and handed to whichever worker is free, so one long document does not hold up
 * the rest; results come back in input order.
 *
 * Workers are unref'd while idle, so a caller that forgets close() does not keep the process
 * alive; they are ref'd while they hold a job so that a pending batch is always answered.
 */
interface Job {
  id: number;
  texts: string[];
  resolve: (r: { ids: Uint32Array; offsets: Uint32Array }) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
}

export class EncodePool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 0;
  private closed = false;

  constructor(
    readonly modelPath: string,
    readonly size: number,
    readonly jobChars = 1 << 17,
  ) {
    if (!(size >= 1)) throw new Error(`EncodePool: size must be >= 1, got ${size}`);
    const workerData = { modelPath, spmModule: require.resolve('sentencepiece-js'), ndbgEncodeWorker: true };
    for (let i = 0; i < size; i++) {
      const worker = new Worker(assetPath('src/tokenizer/spm-encode.js'), { workerData });
      const slot: Slot = { worker };
      worker.unref();
      worker.on('message', (msg: { id: number; ids?: Uint32Array; offsets?: Uint32Array; error?: string }) => {
        const job = slot.job;
        slot.job = undefined;
        worker.unref();
        if (job) {
          if (msg.error !== undefined) job.reject(new Error(`tokenizer worker: ${msg.error}`));
          else job.resolve({ ids: msg.ids!, offsets: msg.offsets! });
        }
        this.pump();
      });
      worker.on('error', (e) => this.fail(e));
      worker.on('exit', (code) => this.fail(new Error(`tokenizer worker exited with code ${code}`)));
      this.slots.push(slot);
    }
  }

  /** Encodes escaped texts; element i of the result is the ids of texts[i]. */
  async encode(texts: string[]): Promise<Uint32Array[]> {
    if (this.closed) throw new Error('EncodePool: used after close()');
    const groups: Array<{ start: number; texts: string[] }> = [];
    let cur: string[] = [];
    let curChars = 0;
    let start = 0;
    texts.forEach((t, i) => {
      if (cur.length && curChars + t.length > this.jobChars) {
        groups.push({ start, texts: cur });
        cur = [];
        curChars = 0;
        start = i;
      }
      cur.push(t);
      curChars += t.length;
    });
    if (cur.length) groups.push({ start, texts: cur });

    const out: Uint32Array[] = new Array(texts.length);
    await Promise.all(
      groups.map(async (g) => {
        const { ids, offsets } = await this.submit(g.texts);
        for (let k = 0; k < g.texts.length; k++) out[g.start + k] = ids.subarray(offsets[k], offsets[k + 1]);
      }),
    );
    return out;
  }

  /** False after close() or after a worker died (the Tokenizer then starts a new pool). */
  get usable(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('EncodePool closed'));
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private submit(texts: string[]): Promise<{ ids: Uint32Array; offsets: Uint32Array }> {
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, texts, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    for (const slot of this.slots) {
      if (slot.job || this.queue.length === 0) continue;
      const job = this.queue.shift()!;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage({ id: job.id, texts: job.texts });
    }
  }

  /** A worker died: every pending job fails (none may hang) and the pool shuts down. */
  private fail(e: Error): void {
    if (this.closed) return;
    this.closed = true;
    for (const slot of this.slots) {
      const job = slot.job;
      slot.job = undefined;
      job?.reject(e);
    }
    for (const q of this.queue.splice(0)) q.reject(e);
    for (const slot of this.slots) void slot.worker.terminate();
  }
}

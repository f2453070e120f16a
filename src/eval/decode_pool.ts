/**
 * Decoding spread over worker processes. On a CPU one process decodes at about one core's pace
 * whatever TensorFlow's thread count: a batch's step is small, so its time alternates between
 * JavaScript (the grammar, the beams) and the model (docs/eval.md, "Decoding in worker
 * processes"). K processes of one TensorFlow thread each, every one holding the checkpoint's
 * model, decode K slices of the prompts side by side.
 *
 * The prompts are dealt out in turn (prompt i to worker i mod K) and the answers put back in
 * order. A prompt's answer does not depend on which prompts share its batch (beam.ts) or on the
 * thread count, so the answers are those of one process, byte for byte (tested).
 */
import { fork, type ChildProcess } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { assetPath } from '../util/paths';
import { PromptTooLongError } from './completer';
import type { PredictOptions } from './types';

/** What a worker loads: the checkpoint and the concrete backend the parent runs. */
export interface DecodeWorkerSpec {
  checkpoint: string;
  backend: string;
}

/** A request to a worker: its prompts, and the options of the completer that asks. */
export interface DecodeRequest {
  id: number;
  prefixes: string[];
  options: PredictOptions;
  completer: Record<string, unknown>;
}

/** A worker's answer: the texts in order, or why not. */
export type DecodeReply =
  | { id: number; texts: string[] }
  | { id: number; error: string; tooLong?: { tokens: number; seqLen: number } }
  | { ready: true }
  | { fatal: string };

/** Fewer prompts than this per worker are decoded in one: the requests' overhead would not pay. */
export const MIN_PROMPTS_PER_WORKER = 16;

/** Each worker's TensorFlow runs one thread: K workers share the machine's K cores. */
const ONE_THREAD = { TF_NUM_INTRAOP_THREADS: '1', TF_NUM_INTEROP_THREADS: '1', OMP_NUM_THREADS: '1' };

/** Lines of a worker's stderr kept for the message when it fails. */
const STDERR_LINES = 20;

interface Pending {
  resolve: (texts: string[]) => void;
  reject: (e: Error) => void;
}

class DecodeWorker {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private readonly stderr: string[] = [];
  private failure: Error | undefined;
  readonly ready: Promise<void>;

  constructor(spec: DecodeWorkerSpec, readonly index: number) {
    this.child = fork(workerScript(), [JSON.stringify(spec)], { env: { ...process.env, ...ONE_THREAD }, execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    this.child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr.push(...chunk.toString().split('\n').filter((l) => l.trim() !== ''));
      this.stderr.splice(0, Math.max(0, this.stderr.length - STDERR_LINES));
    });
    this.ready = new Promise((resolve, reject) => {
      this.child.on('message', (m: DecodeReply) => {
        if ('ready' in m) {
          resolve();
          return this.idle();
        }
        if ('fatal' in m) return this.fail(`could not load the model: ${m.fatal}`, reject);
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if ('texts' in m) p.resolve(m.texts);
        else p.reject(m.tooLong ? new PromptTooLongError(m.tooLong.tokens, m.tooLong.seqLen) : new Error(`decode worker ${this.index}: ${m.error}`));
        this.idle();
      });
      this.child.on('exit', (code, signal) => this.fail(`exited (${signal ?? `code ${code}`})`, reject));
      this.child.on('error', (e) => this.fail(e.message, reject));
    });
  }

  decode(request: Omit<DecodeRequest, 'id'>, id: number): Promise<string[]> {
    if (this.failure) return Promise.reject(this.failure);
    for (const handle of this.handles()) handle.ref?.();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ ...request, id });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  close(): void {
    this.failure ??= new Error(`decode worker ${this.index}: closed`);
    this.child.kill();
  }

  /** Between requests a worker must not keep this process alive; it exits when this process does (decode_worker.ts). */
  private idle(): void {
    if (this.pending.size > 0) return;
    for (const handle of this.handles()) handle.unref?.();
  }

  /** What keeps this process's event loop alive for the worker: the process, its IPC channel, its stderr pipe. */
  private handles(): Array<{ ref?: () => void; unref?: () => void }> {
    return [this.child, this.child.channel, this.child.stderr].filter((h) => h != null) as Array<{ ref?: () => void; unref?: () => void }>;
  }

  private fail(why: string, rejectReady: (e: Error) => void): void {
    if (this.failure) return;
    const tail = this.stderr.length ? `\n${this.stderr.join('\n')}` : '';
    this.failure = new Error(`decode worker ${this.index} ${why}${tail}`);
    rejectReady(this.failure);
    for (const p of this.pending.values()) p.reject(this.failure);
    this.pending.clear();
  }
}

/** The compiled worker beside this module, or the package's build when this module runs from its TypeScript source (tests). */
function workerScript(): string {
  const beside = path.join(__dirname, 'decode_worker.js');
  return fs.existsSync(beside) ? beside : assetPath('dist/eval/decode_worker.js');
}

export class DecodePool {
  private workers: DecodeWorker[] | undefined;
  private nextId = 0;
  /** Prompts the workers have answered. */
  decoded = 0;

  constructor(
    private readonly spec: DecodeWorkerSpec,
    readonly size: number,
  ) {
    if (!(Number.isInteger(size) && size >= 2)) throw new Error(`DecodePool: size must be a whole number >= 2, got ${size}`);
  }

  /** Whether `prompts` prompts are worth spreading over the workers. */
  takes(prompts: number): boolean {
    return prompts >= this.size * MIN_PROMPTS_PER_WORKER;
  }

  /** The answers of a completer with `completer` options to every prefix, in order. */
  async completeFrames(prefixes: string[], options: PredictOptions, completer: Record<string, unknown>): Promise<string[]> {
    // Started on first use: a run that never decodes many prompts at once pays nothing.
    this.workers ??= Array.from({ length: this.size }, (_, k) => new DecodeWorker(this.spec, k));
    await Promise.all(this.workers.map((w) => w.ready));
    const slices = this.workers.map((_, k) => prefixes.filter((__, i) => i % this.size === k));
    const answers = await Promise.all(this.workers.map((w, k) => w.decode({ prefixes: slices[k], options, completer }, this.nextId++)));
    this.decoded += prefixes.length;
    return prefixes.map((_, i) => answers[i % this.size][Math.floor(i / this.size)]);
  }

  /** The workers' process ids (none before first use). */
  workerPids(): number[] {
    return (this.workers ?? []).map((w) => w.pid);
  }

  close(): void {
    for (const w of this.workers ?? []) w.close();
    this.workers = undefined;
  }
}

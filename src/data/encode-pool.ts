/**
 * Tokenizes batches of document texts on worker threads. Results come back tagged with their
 * batch number and the caller consumes them in submission order, so the output does not
 * depend on the number of workers. workers = 0 encodes on the calling thread.
 */
import * as path from 'path';
import { Worker } from 'worker_threads';
import { UserError } from '../util/errors';
import { frameDocument, specialIds, type EncodedDocument, type MaskOptions } from './pack';
import type { TextTokenizer } from './tokenizer';

type Pending = { resolve: (d: EncodedDocument[]) => void; reject: (e: Error) => void };

/**
 * Under ts-jest the sources are .ts files that a worker cannot require; the bootstrap installs
 * a TypeScript transpile hook first (typescript is a dev dependency wherever .ts files run).
 */
function workerScript(): { file: string; eval: boolean } {
  const ext = path.extname(__filename);
  const entry = path.join(__dirname, `encode-worker${ext}`);
  if (ext === '.js') return { file: entry, eval: false };
  const code = `
    const ts = require('typescript'); const fs = require('fs');
    require.extensions['.ts'] = (m, f) => m._compile(ts.transpileModule(fs.readFileSync(f, 'utf8'),
      { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } }).outputText, f);
    require(${JSON.stringify(entry)});`;
  return { file: code, eval: true };
}

export class EncodePool {
  private workers: Worker[] = [];
  private pending = new Map<number, Pending>();
  private nextId = 0;
  private rr = 0;
  private failure: Error | undefined;

  private constructor(private readonly local?: { tok: TextTokenizer; mask: MaskOptions }) {}

  static async create(tokenizerSpec: string, tok: TextTokenizer, mask: MaskOptions, workers: number): Promise<EncodePool> {
    if (workers <= 0) return new EncodePool({ tok, mask });
    const pool = new EncodePool();
    const script = workerScript();
    await Promise.all(
      Array.from({ length: workers }, () => {
        const w = new Worker(script.file, { eval: script.eval, workerData: { tokenizer: tokenizerSpec, mask } });
        pool.workers.push(w);
        return new Promise<void>((resolve, reject) => {
          w.on('message', (msg: { ready?: boolean; fatal?: string; id?: number; docs?: EncodedDocument[]; error?: string }) => {
            if (msg.ready) return resolve();
            if (msg.fatal) {
              pool.failure = new UserError(`tokenizer worker failed: ${msg.fatal}`);
              return reject(pool.failure);
            }
            const p = pool.pending.get(msg.id!);
            if (!p) return;
            pool.pending.delete(msg.id!);
            if (msg.error) p.reject(new Error(`tokenizer worker: ${msg.error}`));
            else p.resolve(msg.docs!);
          });
          w.on('error', (e) => {
            pool.failure = e;
            reject(e);
            for (const p of pool.pending.values()) p.reject(e);
            pool.pending.clear();
          });
        });
      }),
    );
    return pool;
  }

  /** Encodes a batch of texts; the promise resolves with one EncodedDocument per text. */
  encode(texts: string[]): Promise<EncodedDocument[]> {
    if (this.local) {
      const ids = specialIds(this.local.tok);
      return Promise.resolve(texts.map((t) => frameDocument(this.local!.tok.encode(t), ids, this.local!.mask)));
    }
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const worker = this.workers[this.rr++ % this.workers.length];
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      worker.postMessage({ id, texts });
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
    this.workers = [];
  }
}

/**
 * Data stage throughput, measured side by side in one run:
 * - build: MB/s of document text in (tokenize on worker threads + pack + write Arrow), with the
 *   byte tokenizer and, when a sentencepiece model is given/shipped, with it;
 * - loader: tokens/s that MixtureLoader delivers (3 sources, sha256 verification on and off),
 *   and its ratio to the trainer's tokens/s when bench/results/train.json or model.json holds one.
 * Wall-clock rates and rates per CPU second are both reported: the machine is shared, and the
 * CPU rate is the steadier one. Options: --mb N (text per source, default 8), --seq-len T (default 512), --batch B (default 16),
 * --tokenizer PATH, --workers N.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { buildDataset } from '../src/data/build';
import { MixtureLoader } from '../src/data/loader';
import { parseSourceSpec } from '../src/data/sources';
import { Rng } from '../src/util/rng';
import { packageRoot } from '../src/util/paths';

function arg(args: string[], name: string, dflt: string): string {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return dflt;
  return args[i].includes('=') ? args[i].split('=')[1] : args[i + 1];
}

/** Python-ish synthetic text (no training data is used for benchmarks). */
function writeCorpus(file: string, seed: number, mb: number): number {
  const rng = Rng.from(seed, 'bench-data');
  const words = ['def', 'return', 'for', 'in', 'range', 'x', 'y', 'total', '=', '+=', '(', ')', ':', '\n    ', 'if', 'else', 'print', '0', '1', '"abc"', 'é'];
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  while (bytes < mb * 2 ** 20) {
    const n = rng.range(200, 4000);
    const parts: string[] = [];
    for (let len = 0; len < n; ) {
      const w = rng.choice(words);
      parts.push(w);
      len += w.length + 1;
    }
    const text = parts.join(' ');
    bytes += Buffer.byteLength(text);
    fs.writeSync(fd, JSON.stringify({ text }) + '\n');
  }
  fs.closeSync(fd);
  return bytes;
}

/** First number under a key that looks like tokens per second, searched depth-first. */
function findTokensPerSecond(v: unknown, keyPath = ''): { key: string; value: number } | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const p = keyPath ? `${keyPath}.${k}` : k;
    if (typeof x === 'number' && /tok(en)?s?_?(per_?s(ec(ond)?)?|\/s)|tokensPerS/i.test(k)) return { key: p, value: x };
    const inner = findTokensPerSecond(x, p);
    if (inner) return inner;
  }
  return undefined;
}

function trainerTokensPerSecond(): { file: string; key: string; value: number } | undefined {
  for (const name of ['train.json', 'model.json']) {
    const file = path.join(packageRoot(), 'bench', 'results', name);
    if (!fs.existsSync(file)) continue;
    try {
      const hit = findTokensPerSecond(JSON.parse(fs.readFileSync(file, 'utf8')));
      if (hit) return { file: `bench/results/${name}`, ...hit };
    } catch {
      // unreadable result file: no ratio
    }
  }
  return undefined;
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1e6;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const mb = Number(arg(args, 'mb', '8'));
  const seqLen = Number(arg(args, 'seq-len', '512'));
  const batch = Number(arg(args, 'batch', '16'));
  const workers = Number(arg(args, 'workers', String(Math.max(1, Math.min(4, os.cpus().length - 1)))));
  const shipped = path.join(packageRoot(), 'tokenizer', 'ndbg-8k.model');
  const spm = arg(args, 'tokenizer', fs.existsSync(shipped) ? shipped : '');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-bench-data-'));
  try {
    const names = ['traces', 'code', 'web'];
    let textBytes = 0;
    for (const [i, n] of names.entries()) textBytes += writeCorpus(path.join(dir, `${n}.jsonl`), i, mb);
    const sources = names.map((n) => parseSourceSpec(`${n}=${path.join(dir, `${n}.jsonl`)}:text`));
    const build = async (tokenizer: string, out: string, w: number) => {
      const t0 = process.hrtime.bigint();
      const c0 = process.cpuUsage(); // process-wide: includes the worker threads
      const m = await buildDataset({ sources, out, tokenizer, seqLen, shardMb: 16, valFraction: 0.01, splitSeed: 0, maskContext: false, workers: w, force: true, quiet: true });
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = cpuSeconds(c0);
      const tokens = m.sources.reduce((a, s) => a + s.train.tokens + s.val.tokens, 0);
      const textMB = textBytes / 2 ** 20;
      return { seconds: +secs.toFixed(2), cpuSeconds: +cpu.toFixed(2), textMB: +textMB.toFixed(1), MBps: +(textMB / secs).toFixed(2), MBperCpuSecond: +(textMB / cpu).toFixed(2), tokens, workers: w };
    };
    const result: Record<string, unknown> = { config: { mbPerSource: mb, seqLen, batch, workers } };
    const out = path.join(dir, 'byte');
    result.buildByte = await build('byte', out, workers);
    result.buildByteMainThread = await build('byte', path.join(dir, 'byte0'), 0);
    if (spm) result.buildSentencepiece = await build(spm, path.join(dir, 'spm'), workers);

    const measure = (verifySha256: boolean) => {
      const loader = new MixtureLoader({ datasets: [out], weights: { traces: 0.5, code: 0.3, web: 0.2 }, batchSize: batch, seed: 0, verifySha256 });
      const targetTokens = 3 * mb * 2 ** 20 * 1.5; // about 1.5 epochs of the data
      let tokens = 0;
      const t0 = process.hrtime.bigint();
      const c0 = process.cpuUsage();
      while (tokens < targetTokens) tokens += loader.next().ids.length;
      const secs = Number(process.hrtime.bigint() - t0) / 1e9;
      const cpu = cpuSeconds(c0);
      return { tokens, seconds: +secs.toFixed(2), tokensPerSecond: Math.round(tokens / secs), tokensPerCpuSecond: Math.round(tokens / cpu), stateBytes: JSON.stringify(loader.state()).length };
    };
    const loaderVerified = measure(true);
    const loaderUnverified = measure(false);
    result.loader = loaderVerified;
    result.loaderNoSha = loaderUnverified;
    const trainer = trainerTokensPerSecond();
    result.trainer = trainer ?? 'no bench/results/train.json or model.json with a tokens/s field yet';
    if (trainer) result.loaderToTrainerRatio = Math.round(loaderVerified.tokensPerSecond / trainer.value);
    result.target = 'loader >= 100x trainer tokens/s (tiny config)';
    return result;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

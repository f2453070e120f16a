/**
 * Tokenizer benchmark: compression (UTF-8 bytes per token) on held-out NDL documents and
 * held-out Python code for the shipped tokenizer and every alternative its manifest lists,
 * and encode throughput (MB/s) on one thread and on worker threads, measured side by side.
 *
 * The held-out documents are rebuilt from the manifest's own config with the seeded sampler
 * (src/tokenizer/sources.ts), i.e. exactly the documents kept out of training.
 *
 *   npx tsc -p . && npm run bench -- tokenizer [--manifest=tokenizer/ndbg-8k.manifest.json] [--workers=2]
 */
import * as os from 'os';
import * as path from 'path';
import { Tokenizer } from '../src/tokenizer';
import { measureCompression, round } from '../src/tokenizer/evaluate';
import { readManifest } from '../src/tokenizer/manifest';
import { heldOutByRole, sampleAll } from '../src/tokenizer/train';
import { packageRoot } from '../src/util/paths';

function arg(args: string[], name: string, dflt: string): string {
  const hit = args.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : dflt;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const root = packageRoot();
  const manifestPath = path.resolve(root, arg(args, 'manifest', 'tokenizer/ndbg-8k.manifest.json'));
  const workers = Number(arg(args, 'workers', '2'));
  const manifest = readManifest(manifestPath);
  const dir = path.dirname(manifestPath);

  process.stderr.write('rebuilding the held-out documents from the manifest config...\n');
  const held = heldOutByRole(await sampleAll(manifest.config, root));

  const compression: Record<string, unknown> = {};
  for (const c of manifest.comparison) {
    const tok = await Tokenizer.load(path.join(dir, c.model));
    const row: Record<string, unknown> = { model: c.model, settings: c.settings };
    for (const [role, texts] of Object.entries(held)) row[role] = measureCompression(tok, texts);
    compression[c.variant] = row;
    await tok.close();
  }

  // Throughput of the shipped tokenizer on all held-out text (NDL and code together).
  const tok = await Tokenizer.load(path.join(dir, manifest.model));
  const texts = Object.values(held).flat();
  const mb = texts.reduce((a, t) => a + Buffer.byteLength(t, 'utf8'), 0) / 1e6;
  const reps = Math.max(1, Math.ceil(4 / Math.max(mb, 0.01)));
  const corpus = Array.from({ length: reps }, () => texts).flat();
  const totalMb = mb * reps;

  // Wall seconds, and CPU seconds of the whole process (worker threads included): on a shared,
  // busy machine the CPU-time rate shows what the code does when it gets the cores.
  let cpuSingle = 0;
  const timeIt = async (fn: () => Promise<unknown> | unknown, cpu = false) => {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await fn();
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    const c = process.cpuUsage(c0);
    if (cpu) cpuSingle += (c.user + c.system) / 1e6;
    return wall;
  };
  const loadBefore = os.loadavg()[0];
  const single = await timeIt(() => corpus.map((t) => tok.encodeIds(t)), true);
  const firstBatch = await timeIt(() => tok.encodeBatch(corpus, { workers })); // includes worker start-up
  const warmBatch = await timeIt(() => tok.encodeBatch(corpus, { workers }));
  const singleAgain = await timeIt(() => corpus.map((t) => tok.encodeIds(t)), true);
  await tok.close();

  const singleMBs = totalMb / ((single + singleAgain) / 2);
  const workerMBs = totalMb / warmBatch;
  return {
    manifest: path.relative(root, manifestPath),
    sha256: manifest.sha256,
    vocabSize: manifest.vocabSize,
    heldOut: Object.fromEntries(Object.entries(held).map(([r, t]) => [r, { docs: t.length }])),
    compression,
    throughput: {
      corpusMB: round(totalMb, 3),
      cores: os.availableParallelism?.() ?? os.cpus().length,
      loadAverage1m: round(loadBefore, 2),
      singleThreadMBs: round(singleMBs, 3),
      singleThreadPerCpuSecondMBs: round((2 * totalMb) / cpuSingle, 3),
      workers,
      workersMBs: round(workerMBs, 3),
      workersWithStartupMBs: round(totalMb / firstBatch, 3),
      speedup: round(workerMBs / singleMBs, 3),
      targetMBs: 2,
      meetsTarget: workerMBs >= 2,
    },
  };
}

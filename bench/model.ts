import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as tf from '@tensorflow/tfjs-core';
import { benchCorpus } from './corpus';
import { isaFromCpuinfo, peakFromCpuinfo, readCpuinfo, type CpuIsa } from './cpu_isa';
import { flagValue, intFlag } from './flags';
import { CUBE_1024, shapeProducts, tfMatmulGflops } from './matmul_rate';
import { peerList, pythonProblem, torchRun, type Peer } from './peers';
import { compareWithBest, judgeRounds, type Comparison, type Figure, type RoundVerdict } from './rounds';
import type { TokenBatch } from '../src/data/batch';
import { BackendChoice, initBackend, tfVersion } from '../src/backend/backend';
import { loadModelConfig, modelStats } from '../src/model/config';
import { LlamaModel } from '../src/model/model';
import { makeOptimizer } from '../src/train/optimizer';
import { dataStreams, trainableLlama } from '../src/train/adapters';
import { loadRunConfig, type ResolvedRun } from '../src/train/run_config';
import { trainStep } from '../src/train/step';
import { describeMachine } from '../src/util/machine';
import { assetPath } from '../src/util/paths';
import { median } from '../src/util/stats';

/**
 * `npm run bench -- model`: training throughput (tokens/s, MFU) of the quickstart, tiny and small
 * shapes (each at its config's T and micro-batch) on each ndbg backend and on PyTorch, side by side in one run.
 *
 * ndbg's step is the product's: batches from the product loader (a data set built from the test
 * corpus with the config's tokenizer, so rows carry real document boundaries and the document
 * mask is on, as in training), `trainStep` (forward + backward + global-norm clip + AdamW from
 * src/train). PyTorch runs bench/torch_ref_train.py (the same Llama shape, d_ff, GQA, RoPE θ and
 * norm ε passed from the config; causal mask only) in each way a user runs it (peers.ts: eager,
 * eager + SDPA, torch.compile + SDPA; 1 and 2 threads), with the Python peers' venv
 * (`.venv/bin/python`, pip torch) and, when installed, Debian's python3-torch; the script refuses
 * a torch on the reference BLAS. Each ndbg figure is put beside the fastest peer whose rounds
 * agree (rounds.ts: max/min ≤ 1.25), and ndbg ÷ that peer is the ratio; a framework whose rounds
 * differ more is refused, with by how much, instead of giving a ratio.
 *
 * MFU = achieved FLOP/s ÷ the CPU's nominal fp32 peak (cpu_isa.ts); FLOPs per token are
 * modelStats().trainFlopsPerToken (6·N_matmul + 12·L·d·T), the formula the torch script uses.
 * Each framework also times the shape's forward 2-D products and a 1024³ product (matmul_rate.ts,
 * the script's --matmul), and each row gives its model FLOP/s as a fraction of the former: how
 * close the step comes to a step made only of matmuls at the rate that framework's BLAS reaches.
 *
 * Shapes run one after another; on each, PyTorch and every backend run back to back. The whole
 * sequence repeats --rounds times (default 2, so the spread can be judged) and each number is the
 * median over rounds (the per-round values and the load average at each are kept).
 *
 * Flags (--name=value): --backends=tensorflow,wasm --shapes=quickstart,tiny,small --steps=N
 * --warmup=N --rounds=N, and the peers' (peers.ts): --torch=venv,debian|none --torch-python=PATH
 * --torch-modes=eager,sdpa,compile --torch-threads=1,2 --torch-device=cpu|cuda
 */
/** The benchmarked shapes: a config and the tokenizer its vocabulary size belongs to. */
export const SHAPES: Record<string, { config: string; tokenizer: string }> = {
  quickstart: { config: 'configs/quickstart.json', tokenizer: 'tokenizer/ndbg-2k.model' },
  tiny: { config: 'configs/tiny.json', tokenizer: 'tokenizer/ndbg-8k.model' },
  small: { config: 'configs/small.json', tokenizer: 'tokenizer/ndbg-8k.model' },
};

/** Nominal fp32 peak of this CPU (cpu_isa.ts), in GFLOP/s. */
export function cpuPeakGflops(): { gflops: number; basis: string } {
  return peakFromCpuinfo(readCpuinfo(), os.cpus().length, os.cpus()[0]?.speed ?? 0);
}

/** A data set with the shape's tokenizer and row length, built once per (tokenizer, T). */
async function dataFor(tmp: string, tokenizer: string, seqLen: number): Promise<string> {
  const dir = path.join(tmp, `${path.basename(tokenizer, '.model')}-T${seqLen}`);
  return benchCorpus(dir, assetPath(tokenizer), seqLen);
}

/**
 * The product's training on a fresh model: `count` batches drawn beforehand from the product's
 * loader, and `step(i)` running `trainStep` (forward, backward, clipping, the config's optimizer) on batch i.
 */
export function productTraining(run: ResolvedRun, count: number): { batches: TokenBatch[]; step: (i: number) => { loss: number }; dispose: () => void } {
  const llama = LlamaModel.create(run.model, 0);
  const model = trainableLlama(llama, run.model, run.seqLen);
  const o = run.config.optim;
  const opt = makeOptimizer(model, o);
  const stream = dataStreams(run.config, run.seqLen, run.manifest.tokenizer.sha256).openTrainStream();
  const batches: TokenBatch[] = Array.from({ length: count }, () => stream.next());
  return {
    batches,
    step: (i) => trainStep(model, opt, [batches[i]], { lr: 3e-4, gradClip: o.grad_clip }),
    dispose: () => {
      opt.dispose();
      llama.dispose();
    },
  };
}

/**
 * Median seconds of the product's train step, with AdamW whatever the config's optimizer: the
 * PyTorch peers run AdamW, so both sides do the same work (Muon's own cost beside AdamW is
 * `npm run bench -- optimizer`).
 */
function ndbgSteps(run: ResolvedRun, steps: number, warmup: number): { stepS: number; loss: number } {
  const training = productTraining({ ...run, config: { ...run.config, optim: { ...run.config.optim, muon: null } } }, warmup + steps);
  const times: number[] = [];
  let loss = NaN;
  for (let s = 0; s < warmup + steps; s++) {
    const t0 = performance.now();
    loss = training.step(s).loss;
    if (s >= warmup) times.push((performance.now() - t0) / 1000);
  }
  training.dispose();
  return { stepS: median(times), loss };
}

/** The rates one framework's BLAS reaches: on a shape's forward products, and on 1024³. */
interface MatmulRate {
  shape: number;
  cube: number;
}

/** One framework on one shape: each round adds a step time and the load average then. */
interface Sample {
  framework: string;
  shape: string;
  isPeer: boolean;
  stepS: number[];
  load: number[];
  extra: Record<string, unknown>;
  matmul?: MatmulRate;
}

interface Settings {
  backends: string[];
  shapes: string[];
  steps: number;
  warmup: number;
  rounds: number;
  peers: Peer[];
}

function settings(args: string[]): Settings {
  const shapes = (flagValue(args, 'shapes') ?? 'quickstart,tiny,small').split(',');
  for (const s of shapes) if (!SHAPES[s]) throw new Error(`unknown shape ${s}; known: ${Object.keys(SHAPES).join(', ')}`);
  return {
    backends: (flagValue(args, 'backends') ?? 'tensorflow,wasm').split(','),
    shapes,
    steps: intFlag(args, 'steps', 6),
    warmup: intFlag(args, 'warmup', 2, 0),
    rounds: intFlag(args, 'rounds', 2),
    peers: peerList(args, assetPath('.venv/bin/python')),
  };
}

/** Each shape's run config on a data set built from the test corpus with its tokenizer. */
async function loadRuns(shapes: string[], tmp: string): Promise<Record<string, ResolvedRun>> {
  const runs: Record<string, ResolvedRun> = {};
  for (const s of shapes) {
    const shape = SHAPES[s];
    const data = await dataFor(tmp, shape.tokenizer, loadModelConfig(assetPath(shape.config)).max_seq_len);
    // Each shape trains at its config's micro-batch, as users run it; grad_accum 1 so a step is one batch.
    runs[s] = loadRunConfig(assetPath(shape.config), [`data.datasets=${JSON.stringify([data])}`, 'train.grad_accum=1']);
  }
  return runs;
}

/** What one run collects; shared by the per-round measurement functions. */
class Collector {
  readonly samples = new Map<string, Sample>();
  readonly skipped: string[] = [];
  /** Peers and backends that could not run: not retried in later rounds. */
  readonly dead = new Set<string>();
  /** Backends started: their description and 1024³ rate (measured once). */
  readonly started = new Map<string, { choice: string; detail: string; cube: number }>();

  add(framework: string, shape: string, isPeer: boolean, stepS: number, extra: Record<string, unknown>, matmul?: MatmulRate): void {
    const key = `${framework}|${shape}`;
    const e = this.samples.get(key) ?? { framework, shape, isPeer, stepS: [], load: [], extra };
    e.stepS.push(stepS);
    e.load.push(+os.loadavg()[0].toFixed(2));
    e.matmul ??= matmul;
    this.samples.set(key, e);
  }

  skip(who: string, why: string): void {
    this.dead.add(who);
    this.skipped.push(`${who}: ${why}`);
  }
}

function measurePeers(c: Collector, cfg: Settings, run: ResolvedRun, shape: string, firstRound: boolean): void {
  for (const peer of cfg.peers) {
    if (c.dead.has(peer.name) || c.dead.has(peer.python)) continue;
    const problem = pythonProblem(peer.python);
    if (problem) {
      c.skip(peer.python, `${problem}; its peers were not run`);
      continue;
    }
    process.stderr.write(`${peer.name} ${shape}...\n`);
    // The matmul rates depend on the BLAS and threads, not the mode: timed once per shape, in round 1.
    const r = torchRun(peer, run.model, run.config.train.micro_batch_size, cfg.steps, cfg.warmup, firstRound);
    if (typeof r === 'string') {
      c.skip(peer.name, r);
      continue;
    }
    const matmul = firstRound && Number.isFinite(Number(r.mm_gflops)) ? { shape: Number(r.mm_gflops), cube: Number(r.mm1024_gflops) } : undefined;
    const extra = { torch: r.torch, blas: r.blas, blas_env_unset: r.blas_env_unset, device: r.device, threads: r.threads, mode: peer.mode, first_step_s: r.first_step_s, loss: r.loss };
    c.add(peer.name, shape, true, Number(r.median_step_s), extra, matmul);
  }
}

async function measureBackends(c: Collector, cfg: Settings, run: ResolvedRun, shape: string, firstRound: boolean): Promise<void> {
  for (const b of cfg.backends) {
    if (c.dead.has(b)) continue;
    let info;
    try {
      info = await initBackend(b as BackendChoice, (l) => process.stderr.write(`${l}\n`));
    } catch (e) {
      c.skip(`ndbg/${b}`, (e as Error).message);
      c.dead.add(b);
      continue;
    }
    if (!c.started.has(b)) c.started.set(b, { choice: info.choice, detail: info.detail, cube: tfMatmulGflops(CUBE_1024) });
    const st = c.started.get(b)!;
    const matmul = firstRound ? { shape: +tfMatmulGflops(shapeProducts(run.model, run.config.train.micro_batch_size)).toFixed(1), cube: st.cube } : undefined;
    process.stderr.write(`ndbg/${st.choice} ${shape}: ${cfg.steps} steps...\n`);
    const r = ndbgSteps(run, cfg.steps, cfg.warmup);
    const extra = { backend: st.detail, tf_version: st.choice.startsWith('tensorflow') ? tfVersion() : undefined, loss: +r.loss.toFixed(4) };
    c.add(`ndbg/${st.choice}`, shape, false, r.stepS, extra, matmul);
  }
}

/** One result row: medians over rounds, the rounds themselves and their verdict. */
function summarise(e: Sample, run: ResolvedRun, peak: number): Record<string, unknown> & { verdict: RoundVerdict; roundsTokensPerS: number[] } {
  const m = run.model;
  const batch = run.config.train.micro_batch_size;
  const tokens = batch * m.max_seq_len;
  const stepS = median(e.stepS);
  const gflops = (modelStats(m).trainFlopsPerToken * tokens) / stepS / 1e9;
  const roundsTokensPerS = e.stepS.map((x) => Math.round(tokens / x));
  const verdict = judgeRounds(roundsTokensPerS);
  return {
    framework: e.framework,
    shape: e.shape,
    dims: { V: m.vocab_size, d: m.d_model, L: m.n_layers, H: m.n_heads, Hkv: m.n_kv_heads, d_ff: m.d_ff, T: m.max_seq_len, B: batch },
    median_step_s: +stepS.toFixed(4),
    tokens_per_s: Math.round(tokens / stepS),
    achieved_gflops: +gflops.toFixed(1),
    mfu: +(gflops / peak).toFixed(3),
    ...(e.matmul ? { matmul_shape_gflops: e.matmul.shape, matmul_1024_gflops: +e.matmul.cube.toFixed(1), of_matmul_rate: +(gflops / e.matmul.shape).toFixed(3) } : {}),
    rounds_tokens_per_s: roundsTokensPerS,
    rounds_load_average: e.load,
    rounds_max_over_min: verdict.maxOverMin,
    ...(verdict.refused ? { refused: verdict.refused } : {}),
    ...e.extra,
    verdict,
    roundsTokensPerS,
  };
}

type Row = ReturnType<typeof summarise>;

function figure(r: Row): Figure {
  return { framework: String(r.framework), tokensPerS: Number(r.tokens_per_s), rounds: r.roundsTokensPerS, verdict: r.verdict };
}

/** Per ndbg backend and shape: the comparison with the best peer, and the ratio to each accepted peer. */
function compare(rows: Row[], peerRows: Row[]): { vsBest: Record<string, Record<string, Comparison>>; ratios: Record<string, Record<string, number | string>> } {
  const vsBest: Record<string, Record<string, Comparison>> = {};
  const ratios: Record<string, Record<string, number | string>> = {};
  for (const r of rows) {
    const peers = peerRows.filter((p) => p.shape === r.shape);
    (vsBest[String(r.framework)] ??= {})[String(r.shape)] = compareWithBest(figure(r), peers.map(figure));
    for (const p of peers) {
      const refused = r.verdict.refused ?? p.verdict.refused;
      const value = refused ? `refused: ${refused}` : +((r.tokens_per_s as number) / (p.tokens_per_s as number)).toFixed(3);
      (ratios[`${r.framework} ÷ ${p.framework}`] ??= {})[String(r.shape)] = value;
    }
  }
  return { vsBest, ratios };
}

/** The human-readable lines: matmul rates per framework, then each shape's ndbg figure beside the best peer. */
function printSummary(rows: Row[], vsBest: Record<string, Record<string, Comparison>>): void {
  const w = (l: string) => process.stderr.write(`${l}\n`);
  w('matmul rate, fp32 GFLOP/s (the shape\'s forward 2-D products | 1024³), and the step\'s model FLOP/s as a fraction of the first:');
  for (const r of rows) {
    const mm = r.matmul_shape_gflops === undefined ? 'not measured' : `${r.matmul_shape_gflops} | ${r.matmul_1024_gflops}; step ${r.achieved_gflops} GFLOP/s = ${r.of_matmul_rate} of it`;
    w(`  ${String(r.framework).padEnd(40)} ${String(r.shape).padEnd(10)} ${mm}`);
  }
  for (const [framework, byShape] of Object.entries(vsBest)) for (const [shape, c] of Object.entries(byShape)) {
    const own = rows.find((r) => r.framework === framework && r.shape === shape)!;
    const tail = 'refused' in c ? `no ratio: ${c.refused}` : `best peer ${c.best} ${c.bestTokensPerS} tokens/s; ${framework} ÷ best = ${c.ratio}${c.note ? ` (${c.note})` : ''}`;
    w(`${shape}: ${framework} ${own.tokens_per_s} tokens/s (rounds ${own.roundsTokensPerS.join(', ')}); ${tail}`);
  }
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const cfg = settings(args);
  const isa: CpuIsa = isaFromCpuinfo(readCpuinfo());
  const peak = cpuPeakGflops();
  process.stderr.write(`CPU: ${describeMachine().cpu}, ${os.cpus().length} cores; ISA ${isa.label}; nominal fp32 peak ${peak.gflops.toFixed(1)} GFLOP/s (${peak.basis})\n`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-bench-model-'));
  const c = new Collector();
  let runs: Record<string, ResolvedRun>;
  try {
    runs = await loadRuns(cfg.shapes, tmp);
    // Interleaved by shape (PyTorch, then each backend, then the next shape), so the frameworks
    // compared on one shape ran seconds apart: on a shared machine the load moves over minutes.
    for (let round = 0; round < cfg.rounds; round++) for (const s of cfg.shapes) {
      measurePeers(c, cfg, runs[s], s, round === 0);
      await measureBackends(c, cfg, runs[s], s, round === 0);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const all = [...c.samples.values()].map((e) => ({ e, row: summarise(e, runs[e.shape], peak.gflops) }));
  const ndbgRows = all.filter((x) => !x.e.isPeer).map((x) => x.row);
  const peerRows = all.filter((x) => x.e.isPeer).map((x) => x.row);
  const { vsBest, ratios } = compare(ndbgRows, peerRows);
  printSummary([...peerRows, ...ndbgRows], vsBest);
  const results = all.map(({ row: { verdict: _v, roundsTokensPerS: _r, ...rest } }) => rest);
  return {
    batch: Object.fromEntries(cfg.shapes.map((s) => [s, runs[s].config.train.micro_batch_size])),
    steps: cfg.steps,
    warmup: cfg.warmup,
    rounds: cfg.rounds,
    cpu_isa: isa.label,
    cpu_peak_gflops: +peak.gflops.toFixed(1),
    cpu_peak_basis: peak.basis,
    matmul_rate_basis: "fp32 GFLOP/s of each framework's own matmul (tf.matMul on the backend; torch.mm at the peer's threads) over the shape's forward 2-D products (q/k/v fused, o, gate, up, down per layer; the tied head), sum of FLOPs over the sum of each product's fastest of 5 runs; and a 1024³ product",
    round_rule: 'a framework whose per-round tokens/s have max/min > 1.25 is refused: no ratio is built from it',
    load_average: os.loadavg().map((x) => +x.toFixed(2)),
    results,
    vs_best_peer: vsBest,
    ratios,
    skipped: c.skipped,
  };
}

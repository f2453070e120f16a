/**
 * `ndbg quickstart`: the main job end to end on embedded defaults, each stage calling the same
 * library function as its own command and writing its output under one directory:
 *
 *   1 programs   generate + filter synthetic programs, split by program   programs/{train,validation,test}.jsonl
 *   2 trace      sandboxed traces of the train and test programs          traces/{train,test}.jsonl
 *   3 ndl        sampled NDL documents (forward and inverse)               ndl/train.jsonl
 *   4 code       Python standard library source as the code source         code/stdlib.jsonl
 *   5 data       tokenize + pack an Arrow mixture                          data/
 *   6 train      the tiny config within the time budget                    run/ (checkpoints, metrics)
 *   7 eval       next-state accuracy on held-out programs vs the baseline  run/eval/next_state.json
 *   8 report     the HTML report                                           run/report.html
 *   9 debug      a scripted `ndbg debug --verify` session                  debug-session.txt
 */
import * as fs from 'fs';
import * as path from 'path';
import { NaiveBaseline } from '../eval/baseline';
import { CompleterPredictor } from '../eval/completer';
import { loadCompleter, tracePrograms, writeJson } from '../eval/load';
import { evaluateNextState, formatTables, NextStateResult, nextStateReport, ratesOf } from '../eval/next_state';
import { DebugSession } from '../eval/session';
import { ALL_ACTIONS, makeTasks } from '../eval/tasks';
import { buildDataset } from '../data/build';
import { defaultSamplerConfig } from '../ndl/config';
import { sampleDocuments } from '../ndl/generate';
import { ProgramsConfigSchema } from '../programs/config';
import { pySourceDocuments } from '../programs/loaders';
import { generateCorpus } from '../programs/pipeline';
import { splitRecords } from '../programs/splits';
import { sandboxTracer } from '../programs/tracers';
import { renderReport } from '../train/report';
import { listCheckpoints } from '../train/checkpoint_dir';
import { trainFromConfig } from '../train/run';
import { traceProgram } from '../trace';
import type { ProgramRecord, TraceRecord } from '../trace/types';
import { loadConfig } from '../util/config';
import { RunConfigSchema } from '../train/run_config';
import { Tokenizer } from '../tokenizer';
import { UserError } from '../util/errors';
import { replaceFileAtomic } from '../util/fsync';
import { assetPath } from '../util/paths';
import { Progress, formatDuration } from '../util/progress';

export interface QuickstartOptions {
  out: string;
  /** Training time budget. */
  minutes: number;
  /** Upper bound on training steps (the time budget usually ends training first). */
  steps: number;
  programs: number;
  docsPerProgram: number;
  evalPrograms: number;
  config: string;
  /**
   * Generator config: configs/programs-quickstart.json keeps programs (≤ 420 characters, about
   * 100 tokens of context) short enough that a document shows the program and several frames
   * within the tiny model's 256-token context (docs/eval.md, "Choosing the quickstart").
   */
  programsConfig: string;
  tokenizer: string;
  backend: string;
  seed: number;
  workers: number;
  codeBytes: number;
  force: boolean;
  /** Extra `--set` overrides for the training config. */
  set: string[];
}

export const QUICKSTART_DEFAULTS: Omit<QuickstartOptions, 'out'> = {
  minutes: 10,
  steps: 100000,
  programs: 3000,
  docsPerProgram: 8,
  evalPrograms: 100,
  config: assetPath('configs/quickstart.json'),
  programsConfig: assetPath('configs/programs-quickstart.json'),
  tokenizer: assetPath('tokenizer/ndbg-2k.model'),
  backend: 'auto',
  seed: 0,
  workers: 2,
  codeBytes: 2 << 20,
  force: false,
  set: [],
};

export interface QuickstartResult {
  dir: string;
  runDir: string;
  checkpoint: string;
  firstLoss: number;
  lastLoss: number;
  nextState: NextStateResult['tables'];
  seconds: Record<string, number>;
}

function stage(n: number, name: string, what: string): void {
  process.stderr.write(`\n[${n}/9] ${name}: ${what}\n`);
}

function done(where: string, start: number, seconds: Record<string, number>, key: string): void {
  seconds[key] = (Date.now() - start) / 1000;
  process.stderr.write(`      -> ${where} (${formatDuration(seconds[key])})\n`);
}

function writeJsonl(file: string, records: unknown[]): void {
  replaceFileAtomic(file, records.map((r) => JSON.stringify(r) + '\n').join(''));
}

/** The directory of the running Python's standard library (the offline code source). */
function stdlibDir(): string {
  const { execFileSync } = require('child_process') as typeof import('child_process');
  return execFileSync('python3', ['-c', 'import sysconfig; print(sysconfig.get_paths()["stdlib"])']).toString().trim();
}

async function makePrograms(o: QuickstartOptions, dir: string): Promise<Record<'train' | 'validation' | 'test', ProgramRecord[]>> {
  const config = loadConfig(ProgramsConfigSchema, { file: o.programsConfig });
  const tracer = sandboxTracer(o.workers, { maxEvents: config.filter.maxEvents + 16 });
  const records: ProgramRecord[] = [];
  const bar = new Progress('      programs', o.programs);
  try {
    await generateCorpus({
      n: o.programs,
      seed: o.seed,
      config,
      tracer: tracer.trace,
      write: (r) => records.push(r),
      onProgress: (accepted, candidates) => bar.tick(accepted - bar.count, { candidates }),
    });
  } finally {
    await tracer.close();
  }
  bar.finish();
  const split = await splitRecords(records);
  for (const [name, recs] of Object.entries(split.records)) writeJsonl(path.join(dir, `${name}.jsonl`), recs);
  return split.records;
}

/**
 * Documents that fit one training row whole (seq_len + 1 tokens, counted with the real
 * tokenizer), so every row the model trains on shows the program it debugs.
 */
function makeDocuments(o: QuickstartOptions, traces: TraceRecord[], file: string, tok: Tokenizer, seqLen: number): { documents: number; tooLong: number } {
  const sampler = { ...defaultSamplerConfig(), maxTokens: seqLen + 1 };
  const countTokens = (text: string) => tok.encodeIds(text).length;
  let tooLong = 0;
  const docs = traces.flatMap((t) => {
    const r = sampleDocuments(t, o.seed, o.docsPerProgram, sampler, { countTokens });
    tooLong += r.tooLong;
    return r.records;
  });
  writeJsonl(file, docs);
  return { documents: docs.length, tooLong };
}

const pct = (part: number, whole: number) => `${((100 * part) / Math.max(whole, 1)).toFixed(1)}%`;

function makeCodeSource(o: QuickstartOptions, file: string): { files: number; bytes: number } {
  let bytes = 0;
  const docs: Array<{ id: string; text: string }> = [];
  for (const doc of pySourceDocuments(stdlibDir(), { maxBytes: 64 * 1024 })) {
    if (bytes + doc.text.length > o.codeBytes) break;
    bytes += doc.text.length;
    docs.push({ id: doc.id, text: doc.text });
  }
  writeJsonl(file, docs);
  return { files: docs.length, bytes };
}

function readLosses(runDir: string): number[] {
  const file = path.join(runDir, 'metrics.jsonl');
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { loss?: number })
    .filter((m) => typeof m.loss === 'number' && Number.isFinite(m.loss))
    .map((m) => m.loss as number);
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1);
}

const DEBUG_SCRIPT = ['s', 's', 's', 'n', 'n', 'n', 'r', 'c'];

export async function quickstart(o: QuickstartOptions): Promise<QuickstartResult> {
  const dir = path.resolve(o.out);
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0 && !o.force) {
    throw new UserError(`${dir} is not empty; pass --force to replace it or choose another --out`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  for (const sub of ['programs', 'traces', 'ndl', 'code']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  const seconds: Record<string, number> = {};
  const total = Date.now();

  let t = Date.now();
  stage(1, 'programs', `generating ${o.programs} synthetic programs (seed ${o.seed}) and filtering them by running them`);
  const programs = await makePrograms(o, path.join(dir, 'programs'));
  done(`${path.join(dir, 'programs')}/{train,validation,test}.jsonl: ${programs.train.length}/${programs.validation.length}/${programs.test.length} records`, t, seconds, 'programs');

  t = Date.now();
  stage(2, 'trace', `tracing the train and test programs in the sandbox (${o.workers} workers)`);
  const trainTraces = await tracePrograms(programs.train, o.workers);
  const testPrograms = programs.test.slice(0, o.evalPrograms);
  const testTraces = await tracePrograms(testPrograms, o.workers);
  writeJsonl(path.join(dir, 'traces', 'train.jsonl'), trainTraces);
  writeJsonl(path.join(dir, 'traces', 'test.jsonl'), testTraces);
  done(`${path.join(dir, 'traces')}/{train,test}.jsonl: ${trainTraces.length} + ${testTraces.length} runs`, t, seconds, 'trace');

  const seqLen = loadConfig(RunConfigSchema, { file: o.config, overrides: o.set }).model.max_seq_len;
  const tokenizer = await Tokenizer.load(o.tokenizer);

  t = Date.now();
  stage(3, 'ndl', `sampling ${o.docsPerProgram} NDL documents per program (forward:inverse 1:1), each within ${seqLen + 1} tokens`);
  const ndlFile = path.join(dir, 'ndl', 'train.jsonl');
  const docs = makeDocuments(o, trainTraces, ndlFile, tokenizer, seqLen);
  const sampled = docs.documents + docs.tooLong;
  done(`${ndlFile}: ${docs.documents} documents; ${pct(docs.documents, sampled)} fit the context (${docs.tooLong} left out: program + first frame > ${seqLen + 1} tokens)`, t, seconds, 'ndl');

  t = Date.now();
  stage(4, 'code', `taking up to ${(o.codeBytes / 2 ** 20).toFixed(1)} MiB of the Python standard library as the code source`);
  const codeFile = path.join(dir, 'code', 'stdlib.jsonl');
  const codeStats = makeCodeSource(o, codeFile);
  done(`${codeFile}: ${codeStats.files} files, ${(codeStats.bytes / 2 ** 20).toFixed(2)} MiB`, t, seconds, 'code');

  t = Date.now();
  stage(5, 'data', `tokenizing (${path.basename(o.tokenizer)}) and packing rows of ${seqLen + 1} tokens into Arrow shards`);
  const dataDir = path.join(dir, 'data');
  const manifest = await buildDataset({
    sources: [
      { name: 'ndl', path: ndlFile, kind: 'ndl' },
      { name: 'code', path: codeFile, kind: 'code' },
    ],
    out: dataDir,
    tokenizer: o.tokenizer,
    seqLen,
    shardMb: 64,
    valFraction: 0.02,
    splitSeed: o.seed,
    // Measured: masking the program text out of the loss made the 10-minute model worse (it
    // learns the code's token statistics from it), so the whole document is trained on.
    maskContext: false,
    workers: Math.max(0, o.workers - 1),
    force: true,
  });
  const packing = manifest.sources.map((src) => `${src.name}: ${src.packing?.mode}, ${src.packing?.documentsSplit} split, ${pct(src.packing?.paddingFraction ?? 0, 1)} padding`);
  done(`${dataDir}/manifest.json (${packing.join('; ')})`, t, seconds, 'data');

  t = Date.now();
  const runDir = path.join(dir, 'run');
  stage(6, 'train', `${o.config} for up to ${o.minutes} min (backend ${o.backend})`);
  await trainFromConfig({
    config: o.config,
    overrides: [
      `data.datasets=${JSON.stringify([dataDir])}`,
      'data.weights={"ndl": 0.9, "code": 0.1}',
      `train.steps=${o.steps}`,
      `train.max_minutes=${o.minutes}`,
      `train.backend=${o.backend}`,
      `train.seed=${o.seed}`,
      ...o.set,
    ],
    runDir,
    resume: false,
  });
  const losses = readLosses(runDir);
  const window = Math.max(1, Math.min(10, Math.floor(losses.length / 4)));
  const firstLoss = mean(losses.slice(0, window));
  const lastLoss = mean(losses.slice(-window));
  const checkpoints = listCheckpoints(runDir);
  if (checkpoints.length === 0) throw new Error(`quickstart: training wrote no checkpoint under ${runDir}`);
  const checkpoint = checkpoints[checkpoints.length - 1].dir;
  done(`${runDir}: ${losses.length} steps, loss ${firstLoss.toFixed(3)} -> ${lastLoss.toFixed(3)}; checkpoint ${checkpoint}`, t, seconds, 'train');

  t = Date.now();
  stage(7, 'eval', `next-state accuracy on ${testTraces.length} held-out programs, every action, beside the naive baseline`);
  const completer = await loadCompleter({ checkpoint, backend: o.backend as never, maxNewTokens: 64 }, testTraces);
  const { tasks, didNotFit } = makeTasks(testTraces, ALL_ACTIONS, { seed: o.seed, perProgram: 1, budget: completer.budget });
  const notFitting = Object.values(didNotFit).reduce((a, b) => a + b, 0);
  process.stderr.write(`      ${tasks.length} tasks; ${pct(tasks.length, tasks.length + notFitting)} fit the context (${notFitting} did_not_fit, not scored)\n`);
  const result = await evaluateNextState(tasks, [new CompleterPredictor(completer), new NaiveBaseline()], { didNotFit });
  const evalDir = path.join(runDir, 'eval');
  fs.mkdirSync(evalDir, { recursive: true });
  writeJson(path.join(evalDir, 'next_state.json'), nextStateReport(result, completer.name, { programs: testTraces.length, tasks: tasks.length }));
  process.stderr.write(`${formatTables(result.tables)}\n`);
  done(path.join(evalDir, 'next_state.json'), t, seconds, 'eval');

  t = Date.now();
  stage(8, 'report', 'writing the HTML report');
  const reportFile = path.join(runDir, 'report.html');
  fs.writeFileSync(reportFile, renderReport(runDir));
  done(reportFile, t, seconds, 'report');

  t = Date.now();
  stage(9, 'debug', `a scripted \`ndbg debug --verify\` session on examples/count.py: ${DEBUG_SCRIPT.join(';')}`);
  const example = assetPath('examples/count.py');
  const call = 'count("berry", "r")';
  const code = fs.readFileSync(example, 'utf8');
  const trace = await traceProgram({ id: 'count', code, call });
  const session = new DebugSession({ code, call, completer, trace, direction: 'forward', verify: true });
  const transcript: string[] = [...session.start()];
  for (const cmd of DEBUG_SCRIPT) {
    transcript.push(`(ndbg) ${cmd}`, ...(await session.execute(cmd)).output);
    if (session.finished) break;
  }
  const transcriptFile = path.join(dir, 'debug-session.txt');
  fs.writeFileSync(transcriptFile, transcript.join('\n') + '\n');
  process.stderr.write(transcript.map((l) => `      ${l}`).join('\n') + '\n');
  done(transcriptFile, t, seconds, 'debug');

  seconds.total = (Date.now() - total) / 1000;
  const summary: QuickstartResult = { dir, runDir, checkpoint, firstLoss, lastLoss, nextState: result.tables, seconds };
  writeJson(path.join(dir, 'quickstart.json'), {
    ...summary,
    nextState: undefined,
    full_match_model: ratesOf(result.tables[completer.name], 'full'),
    full_match_baseline: ratesOf(result.tables.baseline, 'full'),
  });
  return summary;
}

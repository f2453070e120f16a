/**
 * The quickstart's data stages (1–5): programs → traces → NDL documents that fit the context →
 * the code source and mined real functions with their documents → an Arrow mixture. Shared by
 * `ndbg quickstart` and the learning benchmark, which trains several budgets on one data set.
 */
import * as path from 'path';
import { buildDataset } from '../data/build';
import { defaultSamplerConfig } from '../ndl/config';
import { sampleDocuments } from '../ndl/generate';
import { writeDocumentsSidecar } from '../ndl/run';
import { ProgramsConfigSchema } from '../programs/config';
import { pySourceDocuments } from '../programs/loaders';
import { STDLIB_PACKAGE } from '../programs/mine_corpus';
import { generateCorpus, type GenerateSummary } from '../programs/pipeline';
import { onePerProgram, splitByKeys } from '../programs/splits';
import { tracePrograms } from '../trace';
import { sandboxTracer } from '../trace/tracers';
import { Tokenizer } from '../tokenizer';
import type { ProgramRecord, TraceRecord } from '../trace/types';
import { rowLenOf } from '../data/batch';
import { loadRunConfigFile, trainingSeqLen } from '../train/run_config';
import { loadConfig } from '../util/config';
import { replaceFileAtomic } from '../util/fsync';
import { UserError } from '../util/errors';
import { Progress } from '../util/progress';
import { mineQuickstartFunctions } from './quickstart_mine';
import { done, pct, quickstartWeights, stage, type EvalSplit, type QuickstartOptions, type StageSeconds } from './quickstart_options';

export interface QuickstartData {
  dataDir: string;
  /** Which split the held-out programs come from (--eval-split; test unless choosing a recipe). */
  evalSplit: EvalSplit;
  /** Traces of the held-out programs, one record per distinct program, of evalSplit. */
  testTraces: TraceRecord[];
  /** Traces of the held-out mined real functions, one call per function, of evalSplit (quickstart_mine.ts). */
  minedTraces: TraceRecord[];
  /** NDL documents of the held-out programs (sampled like the training ones): the SRC-token measure reads them. */
  testDocuments: string;
  /** The context T the run trains at (train/run_config.ts trainingSeqLen): documents are at most one row, T+1 tokens. */
  seqLen: number;
  /** NDL documents written, and left out because program + first frame exceed a row. */
  documents: { written: number; tooLong: number };
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
  const keys: string[] = [];
  const bar = new Progress('      programs', o.programs);
  let summary: GenerateSummary;
  try {
    summary = await generateCorpus({
      n: o.programs,
      seed: o.seed,
      config,
      tracer: tracer.trace,
      write: (r, key) => {
        records.push(r);
        keys.push(key);
      },
      onProgress: (accepted, candidates) => bar.tick(accepted - bar.count, { candidates }),
    });
  } finally {
    await tracer.close();
  }
  bar.finish();
  // A short corpus would quietly shrink every split (and the held-out set): say so instead.
  if (summary.stopped) throw new UserError(`quickstart --programs ${o.programs}: ${summary.stopped}`);
  // The generator already parsed every program: split by its keys rather than parse them again.
  const split = splitByKeys(records, keys);
  for (const [name, recs] of Object.entries(split.records)) writeJsonl(path.join(dir, `${name}.jsonl`), recs);
  return split.records;
}

/** Held-out documents per eval program for the SRC-token measure: one forward, one inverse. */
const TEST_DOCS_PER_PROGRAM = 2;
const TEST_FORWARD_SHARE = 1;

/**
 * Training documents are forward:inverse 2:1 (the sampler's default is the paper's 1:1): the
 * forward step actions are the ones the 10-minute model is furthest from learning, and the
 * inverse ones did not lose by it (docs/eval.md, "Session 7").
 */
const TRAIN_FORWARD_SHARE = 2;

/**
 * Documents that fit one training row whole (seq_len + 1 tokens, counted with the real
 * tokenizer), so every row the model trains on shows the program it debugs.
 */
function makeDocuments(o: QuickstartOptions, traces: TraceRecord[], file: string, tok: Tokenizer, seqLen: number, forwardShare: number): { documents: number; tooLong: number } {
  const sampler = { ...defaultSamplerConfig(), maxTokens: rowLenOf(seqLen), forwardShare };
  const countTokens = (text: string) => tok.encodeIds(text).length;
  let tooLong = 0;
  const docs = traces.flatMap((t) => {
    const r = sampleDocuments(t, o.seed, o.docsPerProgram, sampler, { countTokens });
    tooLong += r.tooLong;
    return r.records;
  });
  writeJsonl(file, docs);
  // The traces' Python version travels with the documents into the data set manifest.
  writeDocumentsSidecar(file, { traces, generator: { policy: 'sampled', seed: o.seed, per_program: o.docsPerProgram, sampler }, documents: docs.length });
  return { documents: docs.length, tooLong };
}

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

/** The held-out mined functions' traces, beside the generated programs' in traces/. */
export const minedTracesFile = (split: EvalSplit): string => `mined-${split}.jsonl`;

/**
 * Stage 4: mined real functions (quickstart_mine.ts); one traced call per held-out function for
 * the eval, and, when they are trained on (a mined share above 0), the training calls' NDL
 * documents, sampled as the generated programs' are.
 */
async function makeMinedSource(o: QuickstartOptions, dir: string, tok: Tokenizer, seqLen: number, trained: boolean): Promise<{ file?: string; heldOut: TraceRecord[]; summary: string }> {
  const log = (line: string) => process.stderr.write(`      ${line}\n`);
  // The held-out split is evaluated; the train split's calls are needed only to train on.
  const mined = await mineQuickstartFunctions({ ...o, splits: trained ? ['train', o.evalSplit] : [o.evalSplit] }, path.join(dir, 'mined'), log);
  const heldOut = await tracePrograms(onePerProgram(mined.records[o.evalSplit], o.evalPrograms), o.workers);
  writeJsonl(path.join(dir, 'traces', minedTracesFile(o.evalSplit)), heldOut);
  const s = mined.run.summary;
  const packages = Object.keys(s.perPackage).filter((p) => p !== STDLIB_PACKAGE).length;
  const only = trained ? `the train and ${o.evalSplit} splits'` : `the ${o.evalSplit} split's`;
  const summary = `${path.join(dir, 'mined', 'mined.jsonl')}: ${s.functionsKept} functions (${s.recordsKept} calls) of ${only} from the standard library and ${packages} packages in ${mined.run.seconds.toFixed(0)}s; ${heldOut.length} held-out functions (${o.evalSplit} split)`;
  if (!trained) return { heldOut, summary: `${summary}; no mined document trained on (--mined-share 0)` };
  // A call the mine kept ran in the sandbox; one that no longer traces (a timeout under load) is left out.
  const traced = (await tracePrograms(mined.records.train, o.workers)).filter((t) => t.events.length > 0);
  const file = path.join(dir, 'ndl', 'mined.jsonl');
  const docs = makeDocuments(o, traced, file, tok, seqLen, TRAIN_FORWARD_SHARE);
  return { file, heldOut, summary: `${summary}; ${file}: ${docs.documents} documents of ${traced.length} training calls (${docs.tooLong} left out: > ${rowLenOf(seqLen)} tokens)` };
}

/** Runs stages 1–5 into `dir` (programs/, traces/, ndl/, code/, mined/, data/). */
export async function prepareQuickstartData(o: QuickstartOptions, dir: string, seconds: StageSeconds): Promise<QuickstartData> {
  let t = Date.now();
  stage(1, 'programs', `generating ${o.programs} synthetic programs (seed ${o.seed}) and filtering them by running them`);
  const programs = await makePrograms(o, path.join(dir, 'programs'));
  done(`${path.join(dir, 'programs')}/{train,validation,test}.jsonl: ${programs.train.length}/${programs.validation.length}/${programs.test.length} records`, t, seconds, 'programs');

  t = Date.now();
  const split = o.evalSplit;
  stage(2, 'trace', `tracing the train programs and ${o.evalPrograms} distinct ${split} programs in the sandbox (${o.workers} workers)`);
  const trainTraces = await tracePrograms(programs.train, o.workers);
  // One record per distinct program: a program's inputs share its code, so records would count
  // the same program up to twice (100 records were 68 programs).
  const heldOut = onePerProgram(programs[split], o.evalPrograms);
  if (heldOut.length < o.evalPrograms) process.stderr.write(`      note: the ${split} split holds only ${heldOut.length} distinct programs (--eval-programs ${o.evalPrograms}); generate more with --programs\n`);
  const testTraces = await tracePrograms(heldOut, o.workers);
  writeJsonl(path.join(dir, 'traces', 'train.jsonl'), trainTraces);
  writeJsonl(path.join(dir, 'traces', `${split}.jsonl`), testTraces);
  done(`${path.join(dir, 'traces')}/{train,${split}}.jsonl: ${trainTraces.length} + ${testTraces.length} runs (${testTraces.length} distinct ${split} programs)`, t, seconds, 'trace');

  // The data is built for the run stage 6 trains: at the context that run will resolve to.
  const seqLen = trainingSeqLen(loadRunConfigFile(o.config, o.set));
  const rowLen = rowLenOf(seqLen);
  const tokenizer = await Tokenizer.load(o.tokenizer);

  t = Date.now();
  stage(3, 'ndl', `sampling ${o.docsPerProgram} NDL documents per program (forward:inverse ${TRAIN_FORWARD_SHARE}:1), each within ${rowLen} tokens`);
  const ndlFile = path.join(dir, 'ndl', 'train.jsonl');
  const docs = makeDocuments(o, trainTraces, ndlFile, tokenizer, seqLen, TRAIN_FORWARD_SHARE);
  const sampled = docs.documents + docs.tooLong;
  const testDocuments = path.join(dir, 'ndl', `${split}.jsonl`);
  const testDocs = makeDocuments({ ...o, docsPerProgram: TEST_DOCS_PER_PROGRAM }, testTraces, testDocuments, tokenizer, seqLen, TEST_FORWARD_SHARE);
  done(
    `${ndlFile}: ${docs.documents} documents; ${pct(docs.documents, sampled)} fit the context (${docs.tooLong} left out: program + first frame > ${rowLen} tokens); ${testDocuments}: ${testDocs.documents} of the held-out programs`,
    t,
    seconds,
    'ndl',
  );

  t = Date.now();
  const weights = quickstartWeights(o.minedShare);
  const mineWhat = o.minePackages === null ? 'the standard library' : `the standard library and the pinned packages of ${path.basename(o.minePackages)}`;
  stage(
    4,
    'real code',
    `up to ${(o.codeBytes / 2 ** 20).toFixed(1)} MiB of the standard library's source as the code source (${pct(weights.code, 1)} of training), and real functions mined from ${mineWhat}, each called on inputs whose traces differ (${o.workers} workers), split by function (the held-out ones are evaluated; the rest's documents are ${pct(weights.mined, 1)} of training)`,
  );
  const codeFile = path.join(dir, 'code', 'stdlib.jsonl');
  const codeStats = makeCodeSource(o, codeFile);
  const mined = await makeMinedSource(o, dir, tokenizer, seqLen, weights.mined > 0);
  done(`${codeFile}: ${codeStats.files} files, ${(codeStats.bytes / 2 ** 20).toFixed(2)} MiB; ${mined.summary}`, t, seconds, 'real_code');

  t = Date.now();
  stage(5, 'data', `tokenizing (${path.basename(o.tokenizer)}) and packing rows of ${rowLen} tokens into Arrow shards`);
  const dataDir = path.join(dir, 'data');
  const manifest = await buildDataset({
    sources: [
      { name: 'ndl', path: ndlFile, kind: 'ndl' },
      { name: 'code', path: codeFile, kind: 'code' },
      ...(mined.file ? [{ name: 'mined', path: mined.file, kind: 'ndl' as const }] : []),
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
    pieceDropout: o.pieceDropout,
  });
  const packing = manifest.sources.map((src) => `${src.name}: ${src.packing?.mode}, ${src.packing?.documentsSplit} split, ${pct(src.packing?.paddingFraction ?? 0, 1)} padding`);
  done(`${dataDir}/manifest.json (${packing.join('; ')})`, t, seconds, 'data');

  return { dataDir, evalSplit: split, testTraces, minedTraces: mined.heldOut, testDocuments, seqLen, documents: { written: docs.documents, tooLong: docs.tooLong } };
}

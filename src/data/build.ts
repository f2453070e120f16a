/**
 * `ndbg data build`: documents -> tokens (worker threads) -> packed rows -> Arrow shards +
 * manifest.json. Documents are packed in input order whatever the worker count, the split is a
 * hash of each document's key, and nothing time-dependent is written, so the same inputs give
 * the same bytes. The manifest is written last: a data set without one is incomplete.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Progress } from '../util/progress';
import { Rng } from '../util/rng';
import { UserError } from '../util/errors';
import { DocumentEncoder } from './encode';
import { RowPacker, WholeDocumentPacker, type EncodedDocument, type PackStats } from './pack';
import { MANIFEST_FILE, MANIFEST_FORMAT, tokenDtypeFor, writeManifest, type Manifest, type ManifestSource, type ShardEntry, type DataSplit } from './manifest';
import type { ShardIdentity } from './shard';
import { ShardSink } from './shard_sink';
import { isSourceTree, readDocuments, readSidecar, type SourceDocument, type SourceKind, type SourceSpec } from './sources';
import { Decontaminator } from './decontaminate';
import type { DedupSettings } from './dedup';
import { DocumentFilters, type FilterCounts } from './document_filters';
import { DEFAULT_MAX_FILE_BYTES, emptyWalkReport, formatWalkReport, type WalkReport } from './walk';
import { loadTextTokenizer } from '../tokenizer';

export interface BuildOptions {
  sources: SourceSpec[];
  out: string;
  /** `byte` or a sentencepiece model path. */
  tokenizer: string;
  seqLen: number;
  shardMb: number;
  valFraction: number;
  splitSeed: number;
  maskContext: boolean;
  workers: number;
  /** Replace an existing data set in `out`. */
  force: boolean;
  /** Source kinds packed as whole documents (default: ndl); the others are cut as a stream. */
  wholeDocumentKinds?: readonly SourceKind[];
  /**
   * Exact and near-duplicate removal over code and text sources, e.g. DEFAULT_DEDUP. `ndbg data
   * build` turns it on by default; here it is opt-in (undefined or false: off), so a program
   * that builds its data through this API (the quickstart, the benchmarks) keeps building the
   * same bytes until it asks for it.
   */
  dedup?: DedupSettings | false;
  /** Eval sets (CruxEval-format JSONL): documents of any source that contain one of their programs are dropped. */
  against?: string[];
  /** Directory code sources: larger .py files are skipped (default 1 MiB). */
  maxFileBytes?: number;
  quiet?: boolean;
  /**
   * Piece dropout on training documents (src/tokenizer/piece_dropout.ts): each word piece split
   * with this probability, drawn from splitSeed and the document's text; absent or 0: off.
   */
  pieceDropout?: number;
}

/** Bytes of text per tokenizer task: big enough to amortize messaging, small enough to balance. */
const TASK_TEXT_BYTES = 256 * 1024;
const TASK_MAX_DOCS = 512;

export function isValidationDocument(key: string, valFraction: number, splitSeed: number): boolean {
  return valFraction > 0 && Rng.from(splitSeed, 'val-split', key).next() < valFraction;
}

export const DEFAULT_WHOLE_DOCUMENT_KINDS: readonly SourceKind[] = ['ndl'];

interface Packer {
  readonly stats: PackStats;
  push(doc: EncodedDocument, docId: number): void;
  finish(): void;
}

class SplitWriter {
  readonly packer: Packer;
  private readonly sink: ShardSink;
  documents = 0;
  textBytes = 0;

  constructor(dir: string, rowsPerShard: number, rowLen: number, identity: Omit<ShardIdentity, 'index'>, padId: number, wholeDocuments: boolean) {
    this.sink = new ShardSink(dir, rowsPerShard, rowLen, identity);
    const rows = (t: Uint32Array, m: Uint8Array, d: Int32Array) => this.sink.add(t, m, d);
    this.packer = wholeDocuments ? new WholeDocumentPacker(rowLen, padId, rows) : new RowPacker(rowLen, padId, rows);
  }

  get shards(): ShardEntry[] {
    return this.sink.shards;
  }

  push(doc: EncodedDocument, textBytes: number): void {
    this.packer.push(doc, this.documents++);
    this.textBytes += textBytes;
  }

  finish(): void {
    this.packer.finish();
    this.sink.flush();
  }

  summary(): ManifestSource['train'] {
    return {
      documents: this.documents,
      textBytes: this.textBytes,
      rows: this.shards.reduce((a, s) => a + s.rows, 0),
      tokens: this.shards.reduce((a, s) => a + s.tokens, 0),
      shards: this.shards,
    };
  }
}

function prepareOutDir(out: string, force: boolean): void {
  if (fs.existsSync(path.join(out, MANIFEST_FILE)) && !force) {
    throw new UserError(`${out} already holds a data set (${MANIFEST_FILE}); pass --force to replace it`);
  }
  for (const split of ['train', 'val']) {
    const d = path.join(out, split);
    if (fs.existsSync(d)) {
      for (const f of fs.readdirSync(d)) if (f.endsWith('.arrow') || f.includes('.arrow.tmp')) fs.rmSync(path.join(d, f));
    }
    fs.mkdirSync(d, { recursive: true });
  }
  fs.rmSync(path.join(out, MANIFEST_FILE), { force: true });
}

export async function buildDataset(opts: BuildOptions): Promise<Manifest> {
  if (!Number.isInteger(opts.seqLen) || opts.seqLen < 1) throw new UserError(`--seq-len must be a positive integer, got ${opts.seqLen}`);
  if (!(opts.shardMb > 0)) throw new UserError(`--shard-mb must be positive, got ${opts.shardMb}`);
  if (!(opts.valFraction >= 0 && opts.valFraction < 1)) throw new UserError(`--val-fraction must be in [0, 1), got ${opts.valFraction}`);
  const names = new Set<string>();
  for (const s of opts.sources) {
    if (names.has(s.name)) throw new UserError(`--source ${s.name} given twice; source names must be unique`);
    names.add(s.name);
  }
  if (!opts.sources.length) throw new UserError('give at least one --source NAME=PATH[:kind]');
  const dedup = opts.dedup ?? false;
  if (dedup && !(dedup.threshold > 0 && dedup.threshold <= 1)) throw new UserError(`--near-dup-threshold must be in (0, 1], got ${dedup.threshold}`);
  if (dedup && !Number.isInteger(dedup.seed)) throw new UserError(`--dedup-seed must be an integer, got ${dedup.seed}`);
  if (opts.pieceDropout !== undefined && !(opts.pieceDropout >= 0 && opts.pieceDropout <= 1)) throw new UserError(`--piece-dropout must be in [0, 1], got ${opts.pieceDropout}`);
  const maxFileBytes = opts.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  if (!Number.isInteger(maxFileBytes) || maxFileBytes < 1) throw new UserError(`--max-file-mb must give at least one byte, got ${maxFileBytes} bytes`);
  const against = opts.against ?? [];
  // Before anything is written: a bad eval set fails the build with the output untouched.
  const decontaminator = against.length ? await Decontaminator.fromFiles(against) : undefined;
  const filters = new DocumentFilters(dedup, decontaminator);
  const tok = await loadTextTokenizer(opts.tokenizer);
  const tokenDtype = tokenDtypeFor(tok.vocabSize);
  const rowLen = opts.seqLen + 1;
  const rowBytes = rowLen * ((tokenDtype === 'uint16' ? 2 : 4) + 1 + 4);
  const shardBytesMax = Math.round(opts.shardMb * 2 ** 20);
  const rowsPerShard = Math.max(1, Math.floor(shardBytesMax / rowBytes));
  prepareOutDir(opts.out, opts.force);

  const pool = new DocumentEncoder(tok, { maskContext: opts.maskContext }, opts.workers, opts.pieceDropout ? { probability: opts.pieceDropout, seed: opts.splitSeed, rowLen } : undefined);
  const sources: ManifestSource[] = [];
  try {
    for (const [index, spec] of opts.sources.entries()) {
      const sidecar = readSidecar(spec);
      const whole = (opts.wholeDocumentKinds ?? DEFAULT_WHOLE_DOCUMENT_KINDS).includes(spec.kind);
      const writer = (split: DataSplit) =>
        new SplitWriter(opts.out, rowsPerShard, rowLen, { tokenizerSha256: tok.sha256, seqLen: opts.seqLen, tokenDtype, source: spec.name, split }, tok.padId, whole);
      const writers: Record<DataSplit, SplitWriter> = { train: writer('train'), val: writer('val') };
      const walk = isSourceTree(spec) ? emptyWalkReport() : undefined;
      const counts: FilterCounts = {};
      const docs = filters.apply(spec.kind, index, readDocuments(spec, { maxFileBytes, walkReport: walk }), counts);
      await encodeSource(spec, docs, pool, opts, writers, () => removalSummary(spec, walk, counts));
      if (!opts.quiet) {
        const summary = removalSummary(spec, walk, counts);
        if (summary) process.stderr.write(`${summary}\n`);
      }
      writers.train.finish();
      writers.val.finish();
      sources.push({
        name: spec.name,
        kind: spec.kind,
        path: spec.path,
        relativePath: relativeToDataset(opts.out, spec.path),
        python: sidecar?.python ?? null,
        generator: sidecar?.generator ?? null,
        sidecar: sidecar ? { file: sidecar.file, content: sidecar.content } : null,
        packing: packingSummary(whole, writers.train.packer.stats, writers.val.packer.stats),
        ...(spec.column !== undefined ? { column: spec.column } : {}),
        ...(walk ? { walk } : {}),
        ...counts,
        train: writers.train.summary(),
        val: writers.val.summary(),
      });
    }
  } finally {
    await pool.close();
  }
  const manifest: Manifest = {
    format: MANIFEST_FORMAT,
    tokenizer: {
      path: opts.tokenizer,
      ...(opts.tokenizer === 'byte' ? {} : { relativePath: relativeToDataset(opts.out, opts.tokenizer) }),
      sha256: tok.sha256, vocabSize: tok.vocabSize, bosId: tok.bosId, eosId: tok.eosId, padId: tok.padId },
    seqLen: opts.seqLen,
    rowLen,
    tokenDtype,
    packing: { rowOverlap: 1, maskContext: opts.maskContext, valFraction: opts.valFraction, splitSeed: opts.splitSeed, shardBytesMax, ...(opts.pieceDropout ? { pieceDropout: opts.pieceDropout } : {}) },
    filters: { dedup: dedup ? { ...dedup } : null, against, maxFileBytes },
    sources,
  };
  writeManifest(opts.out, manifest);
  return manifest;
}

/** A path as seen from the data set directory, so a manifest stays meaningful when the tree moves. */
function relativeToDataset(out: string, p: string): string {
  return path.relative(path.resolve(out), path.resolve(p)) || '.';
}

/** The manifest's per-source packing record: both splits' counts added up. */
function packingSummary(whole: boolean, a: PackStats, b: PackStats): NonNullable<ManifestSource['packing']> {
  const targets = a.targetTokens + b.targetTokens;
  return {
    mode: whole ? 'whole_documents' : 'stream',
    documentsSplit: a.documentsSplit + b.documentsSplit,
    documentsDropped: a.documentsDropped + b.documentsDropped,
    tokensDropped: a.tokensDropped + b.tokensDropped,
    paddingFraction: targets ? Number(((a.paddingTokens + b.paddingTokens) / targets).toFixed(6)) : 0,
  };
}

/** One line for stderr: what was left out of a source, or undefined when nothing was. */
function removalSummary(spec: SourceSpec, walk: WalkReport | undefined, counts: FilterCounts): string | undefined {
  const parts: string[] = [];
  if (walk) parts.push(formatWalkReport(spec.path, walk));
  if (counts.dedup && counts.dedup.exact + counts.dedup.near > 0) {
    const d = counts.dedup;
    parts.push(`removed ${d.exact} exact and ${d.near} near duplicates (${d.acrossSources} of documents in earlier sources)`);
  }
  if (counts.decontamination && counts.decontamination.documents > 0) {
    const c = counts.decontamination;
    parts.push(`removed ${c.documents} documents containing ${c.evalPrograms} eval programs (${c.evalIds.slice(0, 3).join(', ')}${c.evalPrograms > 3 ? ', ...' : ''})`);
  }
  return parts.length ? `source ${spec.name}: ${parts.join('; ')}` : undefined;
}

/** Streams one source through the pool, keeping a bounded number of tasks in flight, packing in order. */
async function encodeSource(
  spec: SourceSpec,
  documents: AsyncIterable<SourceDocument>,
  pool: DocumentEncoder,
  opts: BuildOptions,
  writers: Record<DataSplit, SplitWriter>,
  removed: () => string | undefined,
): Promise<void> {
  const progress = new Progress(`build ${spec.name}`, undefined, process.stderr, opts.quiet);
  const maxInFlight = Math.max(2, opts.workers * 2);
  const inFlight: Array<{ splits: DataSplit[]; bytes: number[]; result: Promise<EncodedDocument[]> }> = [];
  const drainOne = async () => {
    const task = inFlight.shift()!;
    const docs = await task.result;
    docs.forEach((d, i) => writers[task.splits[i]].push(d, task.bytes[i]));
    progress.tick(docs.length, { MB: ((writers.train.textBytes + writers.val.textBytes) / 2 ** 20).toFixed(1) });
  };
  let texts: string[] = [];
  let splits: DataSplit[] = [];
  let bytes: number[] = [];
  let taskBytes = 0;
  const submit = async () => {
    if (!texts.length) return;
    inFlight.push({ splits, bytes, result: pool.encode(texts, splits.map((s) => s === 'train')) });
    // Attach a handler now so a rejected task is not reported as unhandled before it is drained.
    inFlight[inFlight.length - 1].result.catch(() => undefined);
    texts = [];
    splits = [];
    bytes = [];
    taskBytes = 0;
    while (inFlight.length >= maxInFlight) await drainOne();
  };
  for await (const doc of documents) {
    const b = Buffer.byteLength(doc.text, 'utf8');
    texts.push(doc.text);
    splits.push(isValidationDocument(doc.key, opts.valFraction, opts.splitSeed) ? 'val' : 'train');
    bytes.push(b);
    taskBytes += b;
    if (taskBytes >= TASK_TEXT_BYTES || texts.length >= TASK_MAX_DOCS) await submit();
  }
  await submit();
  while (inFlight.length) await drainOne();
  progress.finish();
  if (writers.train.documents + writers.val.documents === 0) {
    const why = removed();
    throw new UserError(`source ${spec.name}: ${spec.path} holds no documents${why ? ` that were kept (${why})` : ''}`);
  }
}

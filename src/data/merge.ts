/**
 * `ndbg data merge PART... --out DIR`: data sets built on separate machines (one per shard of
 * the programs) → the data set one machine would have built from the parts' documents
 * concatenated in the order the parts are given: byte-identical shards, the same manifest
 * counts, so the same loader order for a seed (docs/scale-out.md).
 *
 * Shards cannot simply be listed side by side: packing runs across documents (a stream source
 * shares one token between rows, a whole-document source fills rows best-fit over a window of
 * documents) and document ids count from 0 in every part. So the parts' documents are recovered
 * from their rows — a document is the tokens of one doc id; stream rows after a split's first
 * repeat the previous row's last token — and packed again, in part order, by the packer the
 * build used, with document ids continued across parts.
 */
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { loadShard, openDatasets } from './dataset';
import { MANIFEST_FILE, readManifest, writeManifest, type Manifest, type ManifestSource, type DataSplit } from './manifest';
import { RowPacker, WholeDocumentPacker, emptyPackStats, type EncodedDocument, type PackStats } from './pack';
import { ShardSink } from './shard_sink';

export interface MergeOptions {
  /** Data set directories, in the order their documents are concatenated. */
  parts: string[];
  out: string;
  /** Replace a data set already in `out`. */
  force: boolean;
  /** sha256-check every part shard as it is read (default true). */
  verifySha256?: boolean;
}

type PackMode = 'whole_documents' | 'stream';

function packModeOf(s: ManifestSource): PackMode {
  return s.packing?.mode ?? 'stream';
}

/** Every part must have been built the same way; each difference is named with its file. */
function checkParts(parts: string[], manifests: Manifest[]): void {
  const first = manifests[0];
  const firstFile = path.join(parts[0], MANIFEST_FILE);
  const problems: string[] = [];
  manifests.forEach((m, k) => {
    if (k === 0) return;
    const file = path.join(parts[k], MANIFEST_FILE);
    const differs = (field: string, a: unknown, b: unknown) => {
      if (JSON.stringify(a) !== JSON.stringify(b)) problems.push(`  ${file}: ${field} is ${JSON.stringify(b)}, ${firstFile} has ${JSON.stringify(a)}`);
    };
    differs('tokenizer.sha256', first.tokenizer.sha256, m.tokenizer.sha256);
    differs('seqLen', first.seqLen, m.seqLen);
    differs('tokenDtype', first.tokenDtype, m.tokenDtype);
    differs('packing', first.packing, m.packing);
    // Removal settings too: parts deduplicated or decontaminated differently are not one build.
    differs('filters', first.filters ?? null, m.filters ?? null);
    differs('sources (name:kind)', first.sources.map((s) => `${s.name}:${s.kind}`), m.sources.map((s) => `${s.name}:${s.kind}`));
    for (const s of m.sources) {
      const f = first.sources.find((o) => o.name === s.name);
      if (!f) continue;
      differs(`sources.${s.name}.packing.mode`, packModeOf(f), packModeOf(s));
      // Traces differ between Python versions (3.12 inlines comprehensions): never mix them.
      if (f.python !== null && s.python !== null) differs(`sources.${s.name}.python`, f.python, s.python);
      // Documents sampled with another sampler config are another data set, not another shard.
      differs(`sources.${s.name}.generator`, f.generator ?? null, s.generator ?? null);
    }
  });
  if (problems.length) throw new UserError(`data merge: the parts were not built alike:\n${problems.join('\n')}`);
}

/**
 * Documents of one source and split of one part, in document-id order. Whole-document rows come
 * in the order of their smallest doc id, so once a row starting at id f is read, every document
 * below f is complete: the buffer holds about one packing window, not the part.
 */
function* documentsOf(part: string, sourceName: string, split: DataSplit, mode: PackMode, verify: boolean): Generator<{ docId: number; doc: EncodedDocument }> {
  const opened = openDatasets([part], split);
  const src = opened.sources.find((s) => s.name === sourceName)!;
  const rowLen = opened.rowLen;
  const pending = new Map<number, { ids: number[]; mask: number[] }>();
  const flushBelow = function* (limit: number) {
    const ready = [...pending.keys()].filter((id) => id < limit).sort((a, b) => a - b);
    for (const id of ready) {
      const d = pending.get(id)!;
      pending.delete(id);
      yield { docId: id, doc: { ids: Uint32Array.from(d.ids), mask: Uint8Array.from(d.mask) } };
    }
  };
  let rowsSeen = 0;
  for (let k = 0; k < src.shards.length; k++) {
    const shard = loadShard(src, k, split, verify);
    for (let r = 0; r < shard.rows; r++) {
      const at = r * rowLen;
      // A stream row repeats the previous row's last token at position 0.
      const from = mode === 'stream' && rowsSeen > 0 ? 1 : 0;
      let smallest = Infinity;
      for (let i = from; i < rowLen; i++) {
        const id = shard.docIds[at + i];
        if (id < 0) continue;
        smallest = Math.min(smallest, id);
        let d = pending.get(id);
        if (!d) pending.set(id, (d = { ids: [], mask: [] }));
        d.ids.push(shard.tokens[at + i]);
        d.mask.push(shard.mask[at + i]);
      }
      rowsSeen++;
      if (smallest !== Infinity) yield* flushBelow(smallest);
    }
  }
  yield* flushBelow(Infinity);
}

/** Each part's sidecar (the stage manifest next to its input: per-shard counts and paths), kept side by side. */
function mergedSidecar(parts: ManifestSource['sidecar'][]): ManifestSource['sidecar'] {
  const present = parts.filter((p): p is NonNullable<typeof p> => p !== null);
  if (!present.length) return null;
  return { file: present.map((p) => p.file).join(', '), content: { merged_parts: present.map((p) => p.content) } };
}

/** A path recorded relative to one data set directory, made relative to another. */
function rebase(fromDir: string, relative: string, toDir: string): string {
  return path.relative(path.resolve(toDir), path.resolve(fromDir, relative)) || '.';
}

function prepareOut(opts: MergeOptions): void {
  const out = path.resolve(opts.out);
  for (const p of opts.parts) if (path.resolve(p) === out) throw new UserError(`data merge: --out ${opts.out} is one of the parts; choose a new directory`);
  if (fs.existsSync(path.join(opts.out, MANIFEST_FILE)) && !opts.force) {
    throw new UserError(`${opts.out} already holds a data set (${MANIFEST_FILE}); pass --force to replace it`);
  }
  fs.rmSync(path.join(opts.out, MANIFEST_FILE), { force: true });
  for (const split of ['train', 'val']) {
    const d = path.join(opts.out, split);
    if (fs.existsSync(d)) for (const f of fs.readdirSync(d)) if (f.includes('.arrow')) fs.rmSync(path.join(d, f));
    fs.mkdirSync(d, { recursive: true });
  }
}

/** Numeric fields added up across records of one shape (absent in the first: absent in the sum). */
function sumCounts<T extends Record<string, unknown>>(parts: Array<T | undefined>): T | undefined {
  if (!parts[0]) return undefined;
  const add = (a: unknown, b: unknown): unknown => {
    if (typeof a === 'number') return a + (typeof b === 'number' ? b : 0);
    if (a && typeof a === 'object' && !Array.isArray(a)) {
      const o = b as Record<string, unknown> | undefined;
      return Object.fromEntries(Object.entries(a).map(([k, v]) => [k, add(v, o?.[k])]));
    }
    return a;
  };
  return parts.slice(1).reduce((acc, p) => add(acc, p) as T, parts[0]);
}

/**
 * What each part skipped and removed, summed. Each part deduplicated its own documents only:
 * copies that fell into different parts are both kept (docs/data.md).
 */
function summedRemovals(parts: ManifestSource[]): Partial<Pick<ManifestSource, 'walk' | 'dedup' | 'decontamination'>> {
  const out: Partial<Pick<ManifestSource, 'walk' | 'dedup' | 'decontamination'>> = {};
  const walk = sumCounts(parts.map((p) => p.walk));
  const dedup = sumCounts(parts.map((p) => p.dedup));
  const decontamination = sumCounts(parts.map((p) => p.decontamination));
  if (walk) out.walk = walk;
  if (dedup) out.dedup = dedup;
  if (decontamination) {
    const ids = [...new Set(parts.flatMap((p) => p.decontamination?.evalIds ?? []))].sort();
    // Distinct eval programs over all parts: at least the listed ids, at most the parts' sum.
    out.decontamination = { ...decontamination, evalPrograms: Math.max(ids.length, Math.max(...parts.map((p) => p.decontamination?.evalPrograms ?? 0))), evalIds: ids.slice(0, 100) };
  }
  return out;
}

export function mergeDatasets(opts: MergeOptions): Manifest {
  if (opts.parts.length < 1) throw new UserError('data merge: give at least one part (a data set directory)');
  const manifests = opts.parts.map((p) => readManifest(p));
  checkParts(opts.parts, manifests);
  prepareOut(opts);
  const first = manifests[0];
  const verify = opts.verifySha256 ?? true;
  const rowLen = first.rowLen;
  const rowBytes = rowLen * ((first.tokenDtype === 'uint16' ? 2 : 4) + 1 + 4);
  const rowsPerShard = Math.max(1, Math.floor(first.packing.shardBytesMax / rowBytes));
  const sources: ManifestSource[] = first.sources.map((s0, si) => {
    const mode = packModeOf(s0);
    const stats: Record<DataSplit, PackStats> = { train: emptyPackStats(), val: emptyPackStats() };
    const splitSummary = (split: DataSplit): ManifestSource['train'] => {
      const sink = new ShardSink(opts.out, rowsPerShard, rowLen, { tokenizerSha256: first.tokenizer.sha256, seqLen: first.seqLen, tokenDtype: first.tokenDtype, source: s0.name, split });
      const rowSink = (t: Uint32Array, m: Uint8Array, d: Int32Array) => sink.add(t, m, d);
      const padId = first.tokenizer.padId;
      const packer = mode === 'whole_documents' ? new WholeDocumentPacker(rowLen, padId, rowSink) : new RowPacker(rowLen, padId, rowSink);
      let offset = 0;
      for (let k = 0; k < opts.parts.length; k++) {
        for (const { docId, doc } of documentsOf(opts.parts[k], s0.name, split, mode, verify)) packer.push(doc, offset + docId);
        offset += manifests[k].sources[si][split].documents;
      }
      packer.finish();
      sink.flush();
      stats[split] = packer.stats;
      const sum = (f: (s: ManifestSource['train']) => number) => manifests.reduce((a, m) => a + f(m.sources[si][split]), 0);
      return {
        documents: sum((s) => s.documents),
        textBytes: sum((s) => s.textBytes),
        rows: sink.shards.reduce((a, s) => a + s.rows, 0),
        tokens: sink.shards.reduce((a, s) => a + s.tokens, 0),
        shards: sink.shards,
      };
    };
    const train = splitSummary('train');
    const val = splitSummary('val');
    const paths = [...new Set(manifests.map((m) => m.sources[si].path))];
    const relative = [...new Set(manifests.flatMap((m, k) => (m.sources[si].relativePath === undefined ? [] : [rebase(opts.parts[k], m.sources[si].relativePath!, opts.out)])))];
    const merged: ManifestSource = {
      ...s0,
      path: paths.join(', '),
      ...(relative.length ? { relativePath: relative.join(', ') } : {}),
      python: manifests.map((m) => m.sources[si].python).find((p) => p !== null) ?? null,
      sidecar: mergedSidecar(manifests.map((m) => m.sources[si].sidecar)),
      train,
      val,
    };
    Object.assign(merged, summedRemovals(manifests.map((m) => m.sources[si])));
    if (s0.packing) {
      // Dropped documents never reach the rows, so their counts come from the parts.
      const dropped = (f: (p: NonNullable<ManifestSource['packing']>) => number) => manifests.reduce((a, m) => a + f(m.sources[si].packing!), 0);
      const targets = stats.train.targetTokens + stats.val.targetTokens;
      merged.packing = {
        mode,
        documentsSplit: stats.train.documentsSplit + stats.val.documentsSplit,
        documentsDropped: dropped((p) => p.documentsDropped),
        tokensDropped: dropped((p) => p.tokensDropped),
        paddingFraction: targets ? Number(((stats.train.paddingTokens + stats.val.paddingTokens) / targets).toFixed(6)) : 0,
      };
    }
    return merged;
  });
  const tokenizer = { ...first.tokenizer };
  if (tokenizer.relativePath !== undefined) tokenizer.relativePath = rebase(opts.parts[0], tokenizer.relativePath, opts.out);
  const manifest: Manifest = { ...first, tokenizer, sources };
  writeManifest(opts.out, manifest);
  return manifest;
}

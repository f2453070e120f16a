/**
 * What `ndbg data build` removes from the documents it reads, in this order: documents that
 * contain an eval program (every source kind), then duplicates (code and text sources only:
 * the several NDL documents of one program share their code context by design). Runs on the
 * main thread in input order, batch by batch, so the result does not depend on the worker
 * count; one Deduplicator spans all sources of the build, so copies across sources go too.
 */
import type { Decontaminator } from './decontaminate';
import { searchedText } from './decontaminate';
import { Deduplicator, emptyDedupCounts, type DedupCounts, type DedupSettings } from './dedup';
import type { SourceDocument, SourceKind } from './sources';

/** Documents per decontamination batch: one Python process parses a batch's candidate functions. */
const BATCH = 1024;
/** Eval ids listed per source in the manifest (the count is always complete). */
const LISTED_EVAL_IDS = 100;

export interface DecontaminationCounts {
  /** Documents dropped. */
  documents: number;
  /** Distinct eval programs found in them. */
  evalPrograms: number;
  /** The first of those ids, sorted. */
  evalIds: string[];
}

export interface FilterCounts {
  /** Absent when deduplication is off or the source is not code/text. */
  dedup?: DedupCounts;
  /** Absent without an eval set. */
  decontamination?: DecontaminationCounts;
}

export const DEDUPLICATED_KINDS: readonly SourceKind[] = ['code', 'text'];

export class DocumentFilters {
  private readonly dedup?: Deduplicator;

  constructor(dedup: DedupSettings | false, private readonly decontaminator?: Decontaminator) {
    if (dedup) this.dedup = new Deduplicator(dedup);
  }

  /** The documents of source number `source` that are kept, in order; what was removed goes to `counts`. */
  async *apply(kind: SourceKind, source: number, docs: AsyncIterable<SourceDocument>, counts: FilterCounts): AsyncGenerator<SourceDocument> {
    const dedup = this.dedup && DEDUPLICATED_KINDS.includes(kind) ? this.dedup : undefined;
    if (!dedup && !this.decontaminator) {
      yield* docs;
      return;
    }
    if (dedup) counts.dedup = emptyDedupCounts();
    const evalIds = new Set<string>();
    if (this.decontaminator) counts.decontamination = { documents: 0, evalPrograms: 0, evalIds: [] };
    let batch: SourceDocument[] = [];
    const flush = async function* (this: DocumentFilters): AsyncGenerator<SourceDocument> {
      const hits = this.decontaminator ? await this.decontaminator.check(batch.map((d) => searchedText(kind, d.text))) : [];
      for (let i = 0; i < batch.length; i++) {
        const hit = hits[i];
        if (hit) {
          counts.decontamination!.documents++;
          hit.evalIds.forEach((id) => evalIds.add(id));
          continue;
        }
        const dup = dedup?.check(batch[i].text, source);
        if (dup) {
          counts.dedup![dup.kind]++;
          if (dup.ofSource !== source) counts.dedup!.acrossSources++;
          continue;
        }
        yield batch[i];
      }
      batch = [];
    }.bind(this);
    for await (const doc of docs) {
      batch.push(doc);
      if (batch.length >= BATCH) yield* flush();
    }
    yield* flush();
    if (counts.decontamination) {
      const ids = [...evalIds].sort();
      counts.decontamination.evalPrograms = ids.length;
      counts.decontamination.evalIds = ids.slice(0, LISTED_EVAL_IDS);
    }
  }
}

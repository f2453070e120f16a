/**
 * `ndbg programs mine` in the sandbox, into a JSONL and its manifest: the command and the
 * quickstart's mining stage both run it.
 */
import * as fs from 'fs';
import { AtomicJsonlWriter } from '../util/jsonl';
import { mineFunctions, MINE_ALLOW_IMPORTS, MINE_PREIMPORT, type MinedRecord, type MineOptions, type MineSummary } from '../programs/mine';
import { pythonVersion, type CorpusFile } from '../programs/mine_corpus';
import { splitOf, type ProgramSplit, type SplitFractions } from '../programs/splits';
import { sandboxTracer } from '../trace/tracers';

/** The mining knobs (MineOptions without the corpus and the tracers), plus the sandbox's. */
export type MineRunOptions = Omit<MineOptions, 'files' | 'tracer' | 'checkTracer' | 'python'> & {
  python: string;
  workers: number;
  /** Wall-clock seconds per call in the sandbox. */
  timeoutS: number;
  /** The eval set the functions were decontaminated against, for the manifest. */
  againstFile: string | null;
  /**
   * Run each call's first look in a process shared with other calls (faster), instead of a fresh
   * fork. Off by default: a shared process carries state from the calls before it (a standard
   * module's list an earlier call appended to, like `keyword.kwlist`), so which calls pass the
   * determinism check then depends on how calls were scheduled, and two mines of one seed
   * differ in a few calls (test/programs/mine_run.test.ts).
   */
  sharedFirstLook?: boolean;
  /** Mine only the functions whose program key falls in these splits (programs/splits.ts splitOf). */
  onlySplits?: { splits: ProgramSplit[]; fractions: SplitFractions };
};

export interface MineRun {
  records: MinedRecord[];
  summary: MineSummary;
  tracer: string;
  seconds: number;
}

/** The defaults of `ndbg programs mine` (docs/programs.md, "Mined programs"). */
export const MINE_DEFAULTS = { candidates: 8, redraws: 8, perFunction: 4, minPerFunction: 2, minLines: 3, maxFunctionLines: 40, maxCodeLines: 80, maxEvents: 1000, timeoutS: 5 } as const;

/** Mines `files` into `out` (written whole or not at all) and `out.manifest.json`. */
export async function mineToFile(files: CorpusFile[], o: MineRunOptions, out: string): Promise<MineRun> {
  const limits = { maxEvents: o.maxEvents + 16, timeoutS: o.timeoutS, preimport: MINE_PREIMPORT };
  // With sharedFirstLook, calls run in a shared process though they import and define classes
  // (a fork costs more than most calls); the determinism check of those kept runs each in a
  // fresh fork, as `trace` will.
  const tracer = sandboxTracer(o.workers, o.sharedFirstLook ? { ...limits, firstLookModules: MINE_PREIMPORT } : limits);
  const checkTracer = sandboxTracer(o.workers, limits);
  const writer = new AtomicJsonlWriter(out);
  const records: MinedRecord[] = [];
  const start = Date.now();
  let summary: MineSummary;
  try {
    const only = o.onlySplits;
    const wanted = only && ((key: string) => only.splits.includes(splitOf(key, only.fractions)));
    summary = await mineFunctions({ ...o, files, wanted, tracer: tracer.trace, checkTracer: checkTracer.trace }, (r) => {
      writer.write(r);
      records.push(r);
    });
    writer.commit();
  } catch (e) {
    writer.abort();
    throw e;
  } finally {
    await Promise.all([tracer.close(), checkTracer.close()]);
  }
  const seconds = (Date.now() - start) / 1000;
  const manifest = {
    format: 'ndbg-mined-programs/1',
    python: pythonVersion(o.python),
    tracer: tracer.describe,
    seed: o.seed,
    allow_imports: MINE_ALLOW_IMPORTS,
    against: o.againstFile,
    first_look: o.sharedFirstLook ? 'shared process' : 'fresh fork',
    only_splits: o.onlySplits ?? null,
    seconds,
    packages: [...new Map(files.map((f) => [f.origin.package, f.origin])).values()],
    ...summary,
  };
  fs.writeFileSync(`${out}.manifest.json`, JSON.stringify(manifest, null, 2) + '\n');
  return { records, summary, tracer: tracer.describe, seconds };
}

/**
 * The quickstart's mining stage: real functions from the standard library and a pinned list of
 * pure-Python packages (configs/mine-packages-quickstart.txt), each called on several inputs
 * whose traces differ (`ndbg programs mine`), split by function like the generated programs.
 * Functions that are CruxEval programs (normalized AST) are dropped: CruxEval is evaluated on.
 */
import * as path from 'path';
import { loadCruxEvalJsonl } from '../programs/loaders';
import { packageFiles, pythonVersion, stdlibFiles, type CorpusFile } from '../programs/mine_corpus';
import { installPinned, pinnedPackages, pinnedPackagesDir } from '../programs/mine_packages';
import { programKeys, splitRecords, SPLITS, type ProgramSplit, type SplitFractions } from '../programs/splits';
import type { ProgramRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { mineToFile, MINE_DEFAULTS, type MineRun } from './mine_run';
import { SHIPPED_CRUXEVAL } from './quickstart_options';

/**
 * 80/10/10 by function, not the generator's 90/5/5: a mine of about 1,400 functions would leave
 * 70 per held-out split, too few for an interval narrower than ±10 points.
 */
export const MINED_FRACTIONS: SplitFractions = { train: 0.8, validation: 0.1, test: 0.1 };

/** The Python that runs the sandbox; its standard library is mined. */
const PYTHON = 'python3';

export interface MinedSplits {
  /** The mine's records (without provenance) by split. */
  records: Record<'train' | 'validation' | 'test', ProgramRecord[]>;
  run: MineRun;
}

/** The corpus: the standard library, plus the pinned list installed into ndbg's cache (unless null). */
function corpusFiles(packagesList: string | null, log: (line: string) => void): CorpusFile[] {
  const files = stdlibFiles(PYTHON);
  if (packagesList === null) return files;
  const pins = pinnedPackages(packagesList);
  const dir = pinnedPackagesDir(pins, pythonVersion(PYTHON));
  let installed: boolean;
  let seconds: number;
  try {
    ({ installed, seconds } = installPinned(pins, dir, PYTHON, `--mine-packages ${packagesList}`));
  } catch (e) {
    // Offline, or no index pip can reach: the standard library alone still gives a mine.
    if (e instanceof UserError) throw new UserError(`${e.message}; with no package index, pass --mine-packages none to mine the standard library alone`);
    throw e;
  }
  log(installed ? `installed ${pins.length} pinned packages into ${dir} (${seconds.toFixed(0)}s)` : `${pins.length} pinned packages already in ${dir}`);
  return [...files, ...packageFiles(dir)];
}

/**
 * Mines into `dir/mined.jsonl` (with its manifest) and splits the calls by function. Only the
 * functions of `splits` are called: at --mined-share 0 the run needs its held-out split alone,
 * a tenth of the mine, and each function's calls do not depend on which others were mined.
 */
export async function mineQuickstartFunctions(
  o: { minePackages: string | null; seed: number; workers: number; splits: ProgramSplit[] },
  dir: string,
  log: (line: string) => void,
): Promise<MinedSplits> {
  const files = corpusFiles(o.minePackages, log);
  const against = new Set(await programKeys(await loadCruxEvalJsonl(SHIPPED_CRUXEVAL)));
  const all = SPLITS.every((s) => o.splits.includes(s));
  const onlySplits = all ? undefined : { splits: SPLITS.filter((s) => o.splits.includes(s)), fractions: MINED_FRACTIONS };
  const run = await mineToFile(files, { ...MINE_DEFAULTS, seed: o.seed, against, againstFile: SHIPPED_CRUXEVAL, python: PYTHON, workers: o.workers, onlySplits }, path.join(dir, 'mined.jsonl'));
  const split = await splitRecords(
    run.records.map(({ source: _source, ...r }) => r),
    MINED_FRACTIONS,
  );
  return { records: split.records, run };
}

/**
 * OUT/quickstart-data.json: what the quickstart's data stages (1–5) made and from which options,
 * written once stage 5 has finished. `ndbg quickstart --resume` reads it back instead of running
 * those stages again, so a quickstart stopped in training (Ctrl-C, SIGTERM, a pre-empted machine)
 * continues from its last checkpoint on the same data rather than starting over.
 */
import * as fs from 'fs';
import * as path from 'path';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';
import { replaceFileAtomic } from '../util/fsync';
import { readJsonlSync } from '../util/jsonl';
import { minedTracesFile, type QuickstartData } from './quickstart_data';
import type { QuickstartOptions, StageSeconds } from './quickstart_options';

export const DATA_RECORD_FILE = 'quickstart-data.json';

/** The options that decide what stages 1–5 write; a resume must be given the same ones. */
const DATA_OPTIONS = ['programs', 'seed', 'programsConfig', 'evalSplit', 'evalPrograms', 'docsPerProgram', 'codeBytes', 'minePackages', 'minedShare', 'tokenizer', 'pieceDropout'] as const;
type DataOptions = Pick<QuickstartOptions, (typeof DATA_OPTIONS)[number]>;

/** The files' options as absolute paths, so a relative and an absolute spelling agree. */
const PATH_OPTIONS: ReadonlySet<string> = new Set(['programsConfig', 'tokenizer', 'minePackages']);

/** The CLI flag that sets an option, for messages. */
const flagOf = (option: string): string => `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

interface DataRecord {
  options: DataOptions;
  seqLen: number;
  documents: QuickstartData['documents'];
  /** Wall seconds of stages 1–5 when they ran. */
  seconds: StageSeconds;
}

function dataOptions(o: QuickstartOptions): DataOptions {
  const picked: Record<string, unknown> = {};
  for (const k of DATA_OPTIONS) picked[k] = PATH_OPTIONS.has(k) && o[k] !== null ? path.resolve(o[k] as string) : o[k];
  return picked as DataOptions;
}

/** Written after stage 5: from here on OUT can be resumed. */
export function writeDataRecord(dir: string, o: QuickstartOptions, data: QuickstartData, seconds: StageSeconds): void {
  const record: DataRecord = { options: dataOptions(o), seqLen: data.seqLen, documents: data.documents, seconds: { ...seconds } };
  replaceFileAtomic(path.join(dir, DATA_RECORD_FILE), JSON.stringify(record, null, 2) + '\n');
}

/**
 * The data of a quickstart whose stages 1–5 finished in `dir`, given the same data options; its
 * stage seconds are merged into `seconds`. Refused, naming the file and the option, when `dir`
 * has no finished data or the options differ.
 */
export function readDataRecord(dir: string, o: QuickstartOptions, seconds: StageSeconds): QuickstartData {
  const file = path.join(dir, DATA_RECORD_FILE);
  if (!fs.existsSync(file)) {
    throw new UserError(`--resume: ${dir} holds no finished quickstart data (${DATA_RECORD_FILE} is written after stage 5); run without --resume to start over`);
  }
  let record: DataRecord;
  try {
    record = JSON.parse(fs.readFileSync(file, 'utf8')) as DataRecord;
  } catch (e) {
    throw new UserError(`--resume: ${file}: ${(e as Error).message}`);
  }
  const now = dataOptions(o);
  const differ = DATA_OPTIONS.filter((k) => JSON.stringify(record.options?.[k]) !== JSON.stringify(now[k]));
  if (differ.length) {
    const what = differ.map((k) => `${flagOf(k)} ${JSON.stringify(now[k])} (the data was made with ${JSON.stringify(record.options?.[k])})`);
    throw new UserError(`--resume: ${what.join('; ')} per ${file}; resume with the data's options, or run without --resume to start over`);
  }
  const split = o.evalSplit;
  const traces = (file: string, stageWritten: number): TraceRecord[] => {
    if (!fs.existsSync(file)) throw new UserError(`--resume: ${file} is missing (written in stage ${stageWritten}); run without --resume to start over`);
    return readJsonlSync<TraceRecord>(file);
  };
  Object.assign(seconds, record.seconds);
  return {
    dataDir: path.join(dir, 'data'),
    evalSplit: split,
    testTraces: traces(path.join(dir, 'traces', `${split}.jsonl`), 2),
    minedTraces: traces(path.join(dir, 'traces', minedTracesFile(split)), 4),
    testDocuments: path.join(dir, 'ndl', `${split}.jsonl`),
    seqLen: record.seqLen,
    documents: record.documents,
  };
}

/**
 * Which container a corpus file is, told by its first bytes rather than its name: a
 * Hugging Face cache file is `*.arrow` whether it holds the Arrow stream or file format, and a
 * web dump's name rarely says how it was compressed. Also which files of a directory are
 * corpus files, for sources that are a directory of shards.
 */
import * as fs from 'fs';
import * as path from 'path';

export const CORPUS_FORMATS = ['jsonl', 'jsonl.gz', 'jsonl.zst', 'parquet', 'arrow-stream', 'arrow-file'] as const;
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

const startsWith = (head: Buffer, bytes: number[]) => head.length >= bytes.length && bytes.every((b, i) => head[i] === b);

export function detectCorpusFormat(file: string): CorpusFormat {
  const head = Buffer.alloc(8);
  const fd = fs.openSync(file, 'r');
  let n: number;
  try {
    n = fs.readSync(fd, head, 0, head.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  const h = head.subarray(0, n);
  if (startsWith(h, [0x50, 0x41, 0x52, 0x31])) return 'parquet'; // "PAR1"
  if (startsWith(h, [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31])) return 'arrow-file'; // "ARROW1"
  if (startsWith(h, [0xff, 0xff, 0xff, 0xff])) return 'arrow-stream'; // continuation marker of the first message
  if (startsWith(h, [0x1f, 0x8b])) return 'jsonl.gz';
  if (startsWith(h, [0x28, 0xb5, 0x2f, 0xfd])) return 'jsonl.zst';
  return 'jsonl';
}

/**
 * Names a directory-of-shards source reads. Plain `.json` is left out on purpose: the
 * `datasets` library writes `state.json` and `dataset_info.json` beside its Arrow files.
 */
const CORPUS_FILE_RE = /\.(parquet|arrow|feather|ipc|jsonl|ndjson|jsonl\.gz|json\.gz|jsonl\.zst|json\.zst)$/i;

/** Corpus files under dir (recursive, hidden entries skipped), sorted by relative path so builds are reproducible. */
export function listCorpusFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile() && CORPUS_FILE_RE.test(e.name)) out.push(r);
    }
  };
  walk('');
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** A directory written by `datasets`' `save_to_disk` (its Arrow files are the data). */
export function isDatasetsDirectory(dir: string): boolean {
  return fs.existsSync(path.join(dir, 'state.json')) && fs.existsSync(path.join(dir, 'dataset_info.json'));
}

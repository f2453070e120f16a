import * as os from 'os';
import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { buildDataset } from '../../data/build';
import { DEFAULT_DEDUP } from '../../data/dedup';
import { inspectDataset } from '../../data/inspect';
import { mergeDatasets } from '../../data/merge';
import { parseSourceSpec } from '../../data/sources';
import { DEFAULT_TOKENIZER } from '../../tokenizer';

/** Where `ndbg data build` writes without --out: data/NAME, NAME the source names joined by "-" (data/README.md). */
export function defaultDataDir(sourceNames: string[]): string {
  return path.join('data', sourceNames.join('-'));
}

/** `ndbg data build|inspect`: Arrow-packed training shards (docs/data.md). */
const build: CommandModule = {
  command: 'build',
  describe: 'Tokenize documents and pack them into Arrow shards of seq_len+1 token rows, with a manifest',
  builder: (y: Argv) =>
    y
      .option('source', {
        type: 'string',
        array: true,
        demandOption: true,
        describe:
          'NAME=PATH[:kind[:column]], repeatable; kind: ndl (JSONL from `ndbg ndl`), code (dir of .py, or records), text (records); ' +
          'records: JSONL, .jsonl.gz, .jsonl.zst, parquet, Arrow IPC (a `datasets` cache file), or a directory of them; column: the text field (default text)',
      })
      .option('out', { type: 'string', describe: 'Output directory (default: data/NAME, NAME the --source names joined by "-")' })
      .option('tokenizer', { type: 'string', default: DEFAULT_TOKENIZER, describe: 'Sentencepiece .model file, or "byte" for the built-in byte tokenizer' })
      .option('seq-len', { type: 'number', demandOption: true, describe: 'Sequence length T; rows hold T+1 tokens' })
      .option('shard-mb', { type: 'number', default: 64, describe: 'Maximum shard size in MiB' })
      .option('val-fraction', { type: 'number', default: 0.01, describe: 'Fraction of documents (by key) held out for validation' })
      .option('split-seed', { type: 'number', default: 0, describe: 'Seed of the train/validation split hash' })
      .option('mask-context', { type: 'boolean', default: false, describe: 'Exclude the code context of NDL documents from the loss mask' })
      .option('workers', { type: 'number', default: Math.max(1, Math.min(4, os.cpus().length - 1)), describe: 'Tokenizer worker threads (0 = main thread); output does not depend on it' })
      .option('force', { type: 'boolean', default: false, describe: 'Replace an existing data set in --out' })
      .option('dedup', { type: 'boolean', default: true, describe: 'Remove exact and near-duplicate documents within and across code and text sources (--no-dedup: keep them)' })
      .option('near-dup-threshold', { type: 'number', default: DEFAULT_DEDUP.threshold, describe: 'Estimated Jaccard similarity of 5-token shingle sets at which a document is a near duplicate' })
      .option('dedup-seed', { type: 'number', default: DEFAULT_DEDUP.seed, describe: 'Seed of the MinHash functions' })
      .option('against', { type: 'string', array: true, describe: 'Eval set (CruxEval-format JSONL), repeatable: drop documents of any source that contain one of its programs' })
      .option('max-file-mb', { type: 'number', default: 1, describe: 'Directory code sources: skip .py files larger than this many MiB' })
      .option('piece-dropout', { type: 'number', default: 0, describe: 'Split each word piece of the training documents into smaller pieces with this probability (subword regularization, seeded by --split-seed; sentencepiece tokenizers only)' })
      .option('quiet', { type: 'boolean', default: false, describe: 'No progress output' }),
  handler: async (a) => {
    const args = a as unknown as Record<string, unknown>;
    const start = Date.now();
    const sources = (args.source as string[]).map(parseSourceSpec);
    const out = (args.out as string | undefined) ?? defaultDataDir(sources.map((s) => s.name));
    const m = await buildDataset({
      sources,
      out,
      tokenizer: args.tokenizer as string,
      seqLen: args['seq-len'] as number,
      shardMb: args['shard-mb'] as number,
      valFraction: args['val-fraction'] as number,
      splitSeed: args['split-seed'] as number,
      maskContext: args['mask-context'] as boolean,
      workers: args.workers as number,
      force: args.force as boolean,
      dedup: args.dedup ? { ...DEFAULT_DEDUP, threshold: args['near-dup-threshold'] as number, seed: args['dedup-seed'] as number } : false,
      against: (args.against as string[] | undefined) ?? [],
      maxFileBytes: Math.round((args['max-file-mb'] as number) * 2 ** 20),
      quiet: args.quiet as boolean,
      pieceDropout: args['piece-dropout'] as number,
    });
    const secs = (Date.now() - start) / 1000;
    for (const s of m.sources) {
      process.stdout.write(
        `${s.name}: ${s.train.documents}+${s.val.documents} docs (train+val), ${s.train.rows}+${s.val.rows} rows, ` +
          `${s.train.tokens}+${s.val.tokens} tokens, ${s.train.shards.length}+${s.val.shards.length} shards\n`,
      );
    }
    process.stdout.write(`wrote ${out}/manifest.json in ${secs.toFixed(1)}s\n`);
  },
};

const inspect: CommandModule = {
  command: 'inspect <dir>',
  describe: 'Summarize a built data set and decode one row',
  builder: (y: Argv) =>
    y
      .positional('dir', { type: 'string', demandOption: true, describe: 'Data set directory (holds manifest.json)' })
      .option('split', { choices: ['train', 'val'] as const, default: 'train' as const, describe: 'Split to sample from' })
      .option('source', { type: 'string', describe: 'Source to sample from (default: the first with rows)' })
      .option('row', { type: 'number', default: 0, describe: 'Row index within the source and split' })
      .option('tokenizer', { type: 'string', describe: 'Tokenizer to decode with (default: the path in the manifest)' })
      .option('verify', { type: 'boolean', default: false, describe: 'Read every shard of the split and check sha256 and structure' })
      .option('max-chars', { type: 'number', default: 4000, describe: 'Print at most this many decoded characters' }),
  handler: async (a) => {
    const args = a as unknown as Record<string, unknown>;
    await inspectDataset(
      {
        dir: args.dir as string,
        split: args.split as 'train' | 'val',
        source: args.source as string | undefined,
        row: args.row as number,
        tokenizer: args.tokenizer as string | undefined,
        verify: args.verify as boolean,
        maxChars: args['max-chars'] as number,
      },
      (s) => process.stdout.write(s),
    );
  },
};

const merge: CommandModule = {
  command: 'merge <parts..>',
  describe: 'Merge data sets built per shard into the one a single machine builds from their documents in this order (docs/scale-out.md)',
  builder: (y: Argv) =>
    y
      .positional('parts', { type: 'string', array: true, demandOption: true, describe: 'Data set directories, in shard order (e.g. data/part-00000 data/part-00001 ...)' })
      .option('out', { type: 'string', demandOption: true, describe: 'Output directory for the merged data set' })
      .option('force', { type: 'boolean', default: false, describe: 'Replace an existing data set in --out' }),
  handler: (a) => {
    const args = a as unknown as Record<string, unknown>;
    const m = mergeDatasets({ parts: args.parts as string[], out: args.out as string, force: args.force as boolean });
    for (const s of m.sources) {
      process.stdout.write(`${s.name}: ${s.train.documents}+${s.val.documents} docs (train+val), ${s.train.rows}+${s.val.rows} rows, ${s.train.tokens}+${s.val.tokens} tokens\n`);
    }
    process.stdout.write(`merged ${(args.parts as string[]).length} parts into ${args.out}/manifest.json\n`);
  },
};

export const dataCommand: CommandModule = {
  command: 'data <command>',
  describe: 'Build and inspect Arrow-packed training data (docs/data.md)',
  builder: (y: Argv) => y.command(build).command(inspect).command(merge).demandCommand(1, 'Pick `data build`, `data inspect` or `data merge`'),
  handler: () => undefined,
};

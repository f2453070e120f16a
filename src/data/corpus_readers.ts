/**
 * The records of one corpus file, whatever its container: JSONL (plain, gzip, zstd), parquet,
 * Arrow IPC (stream or file format). A record is a JSONL line's object or, for a table, the
 * row's values of the columns asked for; checking fields is the caller's job, so every format
 * gives the same errors for the same bad record.
 */
import { UserError } from '../util/errors';
import { readJsonl } from '../util/jsonl';
import { openArrow } from './arrow_table';
import { detectCorpusFormat, type CorpusFormat } from './corpus_format';
import { openDecompressed } from './decompress';
import { openParquet } from './parquet_table';
import { requireStringColumn, type TableReader } from './table';

export interface CorpusRecord {
  /** Where an error about this record points: `file:LINE` for JSONL, `file row N` for tables. */
  where: string;
  /**
   * 1-based position in the file: the line number for JSONL, the row number for tables (so a
   * JSONL converted to parquet, blank lines aside, numbers its records the same).
   */
  position: number;
  value: unknown;
}

export interface RecordColumns {
  /** The column (or JSONL field) that holds the document; a table must have it as a string column. */
  text: string;
  /** Columns read when a table has them (ids, paths): tables are read column by column, so only these cost. */
  optional: readonly string[];
}

async function* jsonlRecords(file: string, format: CorpusFormat): AsyncGenerator<CorpusRecord> {
  const source = format === 'jsonl' ? file : { stream: openDecompressed(file, format === 'jsonl.gz' ? 'gzip' : 'zstd'), name: file };
  try {
    for await (const line of readJsonl<unknown>(source)) yield { where: `${file}:${line.lineNumber}`, position: line.lineNumber, value: line.value };
  } catch (e) {
    if (e instanceof UserError || format === 'jsonl') throw e;
    throw new UserError(`${file}: cannot decompress it as ${format === 'jsonl.gz' ? 'gzip' : 'zstd'} (${(e as Error).message})`);
  }
}

async function* tableRecords(file: string, table: TableReader, columns: RecordColumns, hint: string): AsyncGenerator<CorpusRecord> {
  requireStringColumn(file, table, columns.text, hint);
  const present = new Set(table.columns.map((c) => c.name));
  const names = [columns.text, ...columns.optional.filter((c) => c !== columns.text && present.has(c))];
  let position = 0;
  for await (const row of table.rows(names)) {
    position++;
    const value: Record<string, unknown> = {};
    names.forEach((n, i) => {
      // A null cell is an absent field, as in a JSONL record that leaves it out.
      if (row[i] !== null && row[i] !== undefined) value[n] = row[i];
    });
    yield { where: `${file} row ${position}`, position, value };
  }
}

/** `hint` ends a missing-column error: how to name another column in this caller's syntax. */
export async function* readCorpusRecords(file: string, columns: RecordColumns, hint: string): AsyncGenerator<CorpusRecord> {
  const format = detectCorpusFormat(file);
  if (format === 'parquet') yield* tableRecords(file, await openParquet(file), columns, hint);
  else if (format === 'arrow-stream' || format === 'arrow-file') yield* tableRecords(file, await openArrow(file), columns, hint);
  else yield* jsonlRecords(file, format);
}

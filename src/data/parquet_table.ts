/**
 * Parquet files through hyparquet (pure JavaScript: no native build on the user's machine,
 * reads what pyarrow, DuckDB and Spark write, maintained) with hyparquet-compressors for the
 * codecs beyond its built-in snappy (zstd, gzip, brotli, lz4). Rows are read one row group at
 * a time, only the named columns, through positional reads of the file: a multi-GB file is
 * never one Buffer.
 */
import type { AsyncBuffer, Compressors, FileMetaData, SchemaElement } from 'hyparquet';
import { UserError } from '../util/errors';
import { importEsm } from './esm_import';
import type { TableColumn, TableReader } from './table';

// Node's entry point of the package (the one `require`/`import` resolve to here) adds asyncBufferFromFile.
type Hyparquet = typeof import('hyparquet/types/node');

/** The column's type in parquet terms: its logical type when it has one, else the physical one. */
function typeName(e: SchemaElement): string {
  return e.logical_type?.type ?? e.converted_type ?? e.type ?? 'group';
}

function isStringElement(e: SchemaElement): boolean {
  return e.type === 'BYTE_ARRAY' && (e.converted_type === 'UTF8' || e.logical_type?.type === 'STRING');
}

export async function openParquet(file: string): Promise<TableReader> {
  const hp = await importEsm<Hyparquet>('hyparquet');
  const { compressors } = await importEsm<{ compressors: Compressors }>('hyparquet-compressors');
  // hyparquet's own file buffer: it must hand hyparquet promises and ArrayBuffers of the realm
  // hyparquet runs in, which is not the caller's under a test runner (see esm_import.ts).
  let buffer: AsyncBuffer;
  let metadata: FileMetaData;
  try {
    buffer = await hp.asyncBufferFromFile(file);
    metadata = await hp.parquetMetadataAsync(buffer);
  } catch (e) {
    throw new UserError(`${file}: not a readable parquet file (${(e as Error).message})`);
  }
  const columns: TableColumn[] = hp.parquetSchema(metadata).children.map((c) => ({
    name: c.element.name,
    type: typeName(c.element),
    isString: isStringElement(c.element) && c.children.length === 0,
  }));
  async function* rows(names: string[]): AsyncGenerator<unknown[]> {
    let groupStart = 0;
    for (const group of metadata.row_groups) {
      const groupEnd = groupStart + Number(group.num_rows);
      let values: unknown[][] = [];
      try {
        await hp.parquetRead({
          file: buffer,
          metadata,
          columns: names,
          rowStart: groupStart,
          rowEnd: groupEnd,
          compressors,
          rowFormat: 'array',
          onComplete: (r: unknown[][]) => {
            values = r;
          },
        });
      } catch (e) {
        throw new UserError(`${file}: cannot read rows ${groupStart}..${groupEnd - 1} (${(e as Error).message})`);
      }
      yield* values;
      groupStart = groupEnd;
    }
  }
  return { columns, rows };
}

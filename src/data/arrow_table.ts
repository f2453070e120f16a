/**
 * Arrow IPC files, both formats: the stream format is what the Hugging Face `datasets` library
 * writes (its cache files and `save_to_disk`'s `data-00000-of-00001.arrow`), the file format
 * what `pyarrow.ipc.new_file` / Feather v2 write. apache-arrow reads either from a file handle,
 * one record batch at a time.
 */
import * as fs from 'fs';
import { DataType, RecordBatchReader, type Field } from 'apache-arrow';
import { UserError } from '../util/errors';
import type { TableColumn, TableReader } from './table';

function isStringType(t: DataType): boolean {
  if (DataType.isDictionary(t)) return isStringType(t.dictionary);
  return DataType.isUtf8(t) || DataType.isLargeUtf8(t);
}

export async function openArrow(file: string): Promise<TableReader> {
  const schemaHandle = await fs.promises.open(file, 'r');
  let fields: Field[];
  try {
    const reader = await RecordBatchReader.from(schemaHandle);
    await reader.open();
    fields = reader.schema.fields;
  } catch (e) {
    throw new UserError(`${file}: not a readable Arrow IPC file (${(e as Error).message})`);
  } finally {
    await schemaHandle.close();
  }
  const columns: TableColumn[] = fields.map((f) => ({ name: f.name, type: String(f.type), isString: isStringType(f.type) }));
  async function* rows(names: string[]): AsyncGenerator<unknown[]> {
    const handle = await fs.promises.open(file, 'r');
    try {
      const reader = await RecordBatchReader.from(handle);
      for await (const batch of reader) {
        const vectors = names.map((n) => batch.getChild(n)!);
        for (let i = 0; i < batch.numRows; i++) yield vectors.map((v) => v.get(i));
      }
    } catch (e) {
      if (e instanceof UserError) throw e;
      throw new UserError(`${file}: cannot read its record batches (${(e as Error).message})`);
    } finally {
      await handle.close();
    }
  }
  return { columns, rows };
}

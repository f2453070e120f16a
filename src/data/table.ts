/**
 * A columnar corpus file (parquet, Arrow IPC) seen the one way the source readers need it: its
 * top-level columns, then the values of a few of them, row by row, one row group or record
 * batch in memory at a time.
 */
import { UserError } from '../util/errors';

export interface TableColumn {
  name: string;
  /** The column's type as the file's own library spells it (for error messages). */
  type: string;
  isString: boolean;
}

export interface TableReader {
  readonly columns: TableColumn[];
  /** The values of `names` (all present in `columns`) for each row, in file order. */
  rows(names: string[]): AsyncGenerator<unknown[]>;
}

/**
 * Checks that `file` has a string column `name`; the error lists what the file does have, so a
 * user who guessed the column wrong sees the right name.
 */
export function requireStringColumn(file: string, table: TableReader, name: string, hint: string): void {
  const present = table.columns.map((c) => `${c.name} (${c.type})`).join(', ') || 'none';
  const col = table.columns.find((c) => c.name === name);
  if (!col) throw new UserError(`${file}: no column "${name}"; its columns are ${present}. ${hint}`);
  if (!col.isString) throw new UserError(`${file}: column "${name}" is ${col.type}, not a string; its columns are ${present}. ${hint}`);
}

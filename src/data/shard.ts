/**
 * One shard = one Arrow IPC file (file format, one record batch) with three columns of
 * FixedSizeList(rowLen): tokens (uint16 or uint32), loss_mask (uint8), doc_ids (int32).
 * Identity fields go into the schema metadata (keys `ndbg.*`). Shards are written to a temp
 * name and renamed, so a crash never leaves a half-written shard under its final name.
 */
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as A from 'apache-arrow';
import { UserError } from '../util/errors';

export const SHARD_FORMAT = 'ndbg-shard-v1';
export const COLUMNS = ['tokens', 'loss_mask', 'doc_ids'] as const;

export type TokenArray = Uint16Array | Uint32Array;

export interface ShardIdentity {
  tokenizerSha256: string;
  seqLen: number;
  tokenDtype: 'uint16' | 'uint32';
  source: string;
  split: string;
  index: number;
}

export interface ShardData {
  rows: number;
  rowLen: number;
  tokens: TokenArray;
  mask: Uint8Array;
  docIds: Int32Array;
}

function fixedList<T extends A.DataType>(type: T, rowLen: number, rows: number, values: ArrayBufferView): A.Data {
  const child = A.makeData({ type, length: rows * rowLen, nullCount: 0, data: values as never } as never);
  const listType = new A.FixedSizeList(rowLen, new A.Field('item', type, false));
  return A.makeData({ type: listType, length: rows, nullCount: 0, child } as never);
}

/** Serializes rows into Arrow IPC file bytes (deterministic: same rows and identity, same bytes). */
export function encodeShard(data: ShardData, id: ShardIdentity): Uint8Array {
  const tokenType = id.tokenDtype === 'uint16' ? new A.Uint16() : new A.Uint32();
  const cols = [
    fixedList(tokenType, data.rowLen, data.rows, data.tokens),
    fixedList(new A.Uint8(), data.rowLen, data.rows, data.mask),
    fixedList(new A.Int32(), data.rowLen, data.rows, data.docIds),
  ];
  const fields = COLUMNS.map((n, i) => new A.Field(n, cols[i].type, false));
  const metadata = new Map<string, string>([
    ['ndbg.format', SHARD_FORMAT],
    ['ndbg.tokenizer_sha256', id.tokenizerSha256],
    ['ndbg.seq_len', String(id.seqLen)],
    ['ndbg.token_dtype', id.tokenDtype],
    ['ndbg.source', id.source],
    ['ndbg.split', id.split],
    ['ndbg.shard_index', String(id.index)],
  ]);
  const schema = new A.Schema(fields, metadata);
  const struct = A.makeData({ type: new A.Struct(fields), length: data.rows, nullCount: 0, children: cols });
  const table = new A.Table([new A.RecordBatch(schema, struct)]);
  return A.tableToIPC(table, 'file');
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}


export interface ShardExpectation {
  /** Absolute or cwd-relative path of the shard. */
  file: string;
  /** The manifest that lists it, for error messages. */
  manifestFile: string;
  bytes: number;
  sha256: string;
  rows: number;
  identity: ShardIdentity;
  /** Hash the whole file (catches any corruption); false checks size and structure only. */
  verifySha256: boolean;
}

/**
 * Reads and checks one shard against its manifest entry. Each failure is one UserError naming
 * the file: missing, truncated (size), corrupted (sha256 or unreadable Arrow), built with another
 * tokenizer, or disagreeing with the manifest (rows, seq_len, dtype, source, columns).
 */
export function readShard(e: ShardExpectation): ShardData {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(e.file);
  } catch (err) {
    throw new UserError(`shard ${e.file} (listed in ${e.manifestFile}) cannot be read: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
  if (bytes.length < e.bytes) {
    throw new UserError(`shard ${e.file} is truncated: ${bytes.length} bytes, ${e.manifestFile} says ${e.bytes}`);
  }
  if (bytes.length !== e.bytes) {
    throw new UserError(`shard ${e.file} has ${bytes.length} bytes, ${e.manifestFile} says ${e.bytes} (altered or from another build)`);
  }
  const shaOk = !e.verifySha256 || sha256Hex(bytes) === e.sha256;
  let table: A.Table;
  try {
    table = A.tableFromIPC(bytes);
  } catch (err) {
    throw new UserError(`shard ${e.file} is corrupted: not a readable Arrow IPC file (${(err as Error).message})`);
  }
  const meta = table.schema.metadata;
  const shardTokenizer = meta.get('ndbg.tokenizer_sha256');
  if (meta.get('ndbg.format') !== SHARD_FORMAT && shaOk) {
    throw new UserError(`shard ${e.file} is not an ndbg shard (schema metadata ndbg.format = ${meta.get('ndbg.format') ?? 'missing'})`);
  }
  if (shardTokenizer !== undefined && shardTokenizer !== e.identity.tokenizerSha256 && /^[0-9a-f]{64}$/.test(shardTokenizer)) {
    throw new UserError(
      `shard ${e.file} was built with another tokenizer (sha256 ${shardTokenizer.slice(0, 12)}…), ` +
        `but ${e.manifestFile} says ${e.identity.tokenizerSha256.slice(0, 12)}…`,
    );
  }
  if (!shaOk) throw new UserError(`shard ${e.file} is corrupted: its sha256 differs from the one in ${e.manifestFile}`);
  const mismatch = (what: string, got: unknown, want: unknown) =>
    new UserError(`shard ${e.file} does not match ${e.manifestFile}: ${what} is ${got}, the manifest says ${want}`);
  const id = e.identity;
  if (meta.get('ndbg.seq_len') !== String(id.seqLen)) throw mismatch('seq_len', meta.get('ndbg.seq_len'), id.seqLen);
  if (meta.get('ndbg.token_dtype') !== id.tokenDtype) throw mismatch('token dtype', meta.get('ndbg.token_dtype'), id.tokenDtype);
  if (meta.get('ndbg.source') !== id.source) throw mismatch('source', meta.get('ndbg.source'), id.source);
  if (meta.get('ndbg.split') !== id.split) throw mismatch('split', meta.get('ndbg.split'), id.split);
  if (table.numRows !== e.rows) throw mismatch('the row count', table.numRows, e.rows);
  const names = table.schema.fields.map((f) => f.name).join(',');
  if (names !== COLUMNS.join(',')) throw mismatch('the column list', names, COLUMNS.join(','));
  const rowLen = id.seqLen + 1;
  const tokens = columnValues(table, 'tokens', rowLen, e) as TokenArray;
  const mask = columnValues(table, 'loss_mask', rowLen, e) as Uint8Array;
  const docIds = columnValues(table, 'doc_ids', rowLen, e) as Int32Array;
  const wantTokenArray = id.tokenDtype === 'uint16' ? Uint16Array : Uint32Array;
  if (!(tokens instanceof wantTokenArray)) throw mismatch('the tokens element type', tokens.constructor.name, id.tokenDtype);
  if (!(mask instanceof Uint8Array)) throw mismatch('the loss_mask element type', (mask as object).constructor.name, 'uint8');
  if (!(docIds instanceof Int32Array)) throw mismatch('the doc_ids element type', (docIds as object).constructor.name, 'int32');
  return { rows: table.numRows, rowLen, tokens, mask, docIds };
}

/** The flat values of a FixedSizeList column (zero-copy for a one-batch shard). */
function columnValues(table: A.Table, name: string, rowLen: number, e: ShardExpectation): ArrayBufferView {
  const col = table.getChild(name)!;
  const type = col.type as A.DataType;
  if (!(type instanceof A.FixedSizeList) || type.listSize !== rowLen) {
    throw new UserError(`shard ${e.file} does not match ${e.manifestFile}: column ${name} is ${type}, expected FixedSizeList(${rowLen})`);
  }
  const parts = col.data.map((d) => {
    const child = d.children[0];
    const start = child.offset + d.offset * rowLen;
    return (child.values as Uint8Array).subarray(start, start + d.length * rowLen);
  });
  if (parts.length === 1) return parts[0];
  const Ctor = parts[0].constructor as new (n: number) => Uint8Array;
  const out = new Ctor(table.numRows * rowLen);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

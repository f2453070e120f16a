import { replaceFileAtomicWith } from '../util/fsync';
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';

/**
 * A small reader/writer of the safetensors format (https://github.com/huggingface/safetensors):
 *   u64 little-endian N | N bytes of JSON header | raw little-endian tensor bytes.
 * The header maps each name to {dtype, shape, data_offsets: [begin, end]} (offsets relative to
 * the byte after the header) plus an optional "__metadata__" string→string map.
 *
 * Writing: float32 only ("F32"), tensors in the order given, header padded with spaces to a
 * multiple of 8 bytes (as the reference implementation does). Files are written to a temp name
 * and renamed, so a crash never leaves a half-written file under the real name. Both directions
 * stream tensor by tensor through a file descriptor, so a file's size is bounded by the disk,
 * not by Node's Buffer limits.
 * Reading: F32, F16, BF16 and F64 are converted to Float32Array (HF checkpoints are often
 * bf16/f16); I32/I64 are rejected with a clear error since model weights are never integers.
 */
export interface NamedTensor {
  shape: number[];
  data: Float32Array;
}

export type TensorMap = Map<string, NamedTensor>;

export interface SafetensorsFile {
  tensors: TensorMap;
  metadata: Record<string, string>;
}

/**
 * Metadata of every weights file ndbg writes in its own layout (checkpoints): HF tensor names but
 * linear weights stored [in, out], so the file says so instead of posing as a PyTorch/HF file
 * (`format: pt`). Hugging Face files (export-hf) are [out, in] and carry `format: pt`.
 */
export const NDBG_LAYOUT = 'linear-in-out';
export const NDBG_WEIGHTS_METADATA: Record<string, string> = { format: 'ndbg', ndbg_layout: NDBG_LAYOUT };
export const HF_WEIGHTS_METADATA: Record<string, string> = { format: 'pt' };

/** Whether a file's metadata marks it as ndbg's own layout. */
export function isNdbgLayout(metadata: Record<string, string>): boolean {
  return metadata.format === 'ndbg' && metadata.ndbg_layout === NDBG_LAYOUT;
}

const DTYPE_BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2, F64: 8, I32: 4, I64: 8, U8: 1, I8: 1, BOOL: 1 };

/**
 * The most bytes one read or write call moves. Tensors are streamed in slices of this size, so no
 * Buffer ever holds a whole file (Node 20 refuses `readFileSync` over 2 GiB and `Buffer.alloc`
 * over 4 GiB) and a single syscall never meets the 2 GiB cap of `fs.writeSync`/`fs.readSync`.
 * Tests pass a smaller `chunkBytes` to drive the multi-slice path with small tensors.
 */
export const MAX_CHUNK_BYTES = 64 * 2 ** 20;
/** The reference implementation's limit on the JSON header (it refuses larger headers). */
const MAX_HEADER_BYTES = 100 * 2 ** 20;

export interface StreamOptions {
  /** Bytes per read/write call (default MAX_CHUNK_BYTES); rounded down to a multiple of 8. */
  chunkBytes?: number;
}

function chunkOf(o: StreamOptions): number {
  const c = Math.floor((o.chunkBytes ?? MAX_CHUNK_BYTES) / 8) * 8;
  if (!(c >= 8)) throw new Error(`safetensors: chunkBytes must be at least 8, got ${o.chunkBytes}`);
  return c;
}

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

type Entries = TensorMap | Array<[string, NamedTensor]>;
const entriesOf = (t: Entries): Array<[string, NamedTensor]> => (t instanceof Map ? [...t.entries()] : t);

/** The 8-byte length, the padded JSON header, and the byte count of the data that follows. */
export function safetensorsHeader(tensors: Entries, metadata: Record<string, string> = {}): { prefix: Buffer; dataBytes: number } {
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of entriesOf(tensors)) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`safetensors: ${name} has shape [${t.shape}] but ${t.data.length} values`);
    if (name === '__metadata__') throw new Error('safetensors: "__metadata__" is reserved');
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + 4 * n] };
    offset += 4 * n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const headerBuf = Buffer.from(json, 'utf8');
  const prefix = Buffer.alloc(8 + headerBuf.length);
  prefix.writeBigUInt64LE(BigInt(headerBuf.length), 0);
  headerBuf.copy(prefix, 8);
  return { prefix, dataBytes: offset };
}

const bytesOf = (t: NamedTensor) => new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);

/** The whole file in one Buffer: for small files and tests only (writeSafetensors streams). */
export function encodeSafetensors(tensors: Entries, metadata: Record<string, string> = {}): Buffer {
  if (!isLittleEndian) throw new Error('safetensors: big-endian hosts are not supported');
  const { prefix, dataBytes } = safetensorsHeader(tensors, metadata);
  const out = Buffer.alloc(prefix.length + dataBytes);
  prefix.copy(out, 0);
  let pos = prefix.length;
  for (const [, t] of entriesOf(tensors)) {
    out.set(bytesOf(t), pos);
    pos += t.data.byteLength;
  }
  return out;
}

/** Writes all of `bytes` at `position`, in calls of at most `chunk` bytes. */
function writeAllAt(fd: number, bytes: Uint8Array, position: number, chunk: number): void {
  let done = 0;
  while (done < bytes.length) {
    const n = fs.writeSync(fd, bytes, done, Math.min(chunk, bytes.length - done), position + done);
    done += n;
  }
}

/**
 * Writes a safetensors file into an open descriptor, header first, then each tensor's bytes
 * straight from its Float32Array (no copy of the data). Returns the file's size in bytes.
 */
export function writeSafetensorsFd(fd: number, tensors: Entries, metadata: Record<string, string> = {}, o: StreamOptions = {}): number {
  if (!isLittleEndian) throw new Error('safetensors: big-endian hosts are not supported');
  const chunk = chunkOf(o);
  const { prefix, dataBytes } = safetensorsHeader(tensors, metadata);
  writeAllAt(fd, prefix, 0, chunk);
  let pos = prefix.length;
  for (const [, t] of entriesOf(tensors)) {
    writeAllAt(fd, bytesOf(t), pos, chunk);
    pos += t.data.byteLength;
  }
  return prefix.length + dataBytes;
}

/** Writes `file` atomically (temp file, fsync, rename, fsync of the folder), streaming tensor by tensor. */
export function writeSafetensors(file: string, tensors: Entries, metadata: Record<string, string> = {}, o: StreamOptions = {}): void {
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  replaceFileAtomicWith(file, (fd) => writeSafetensorsFd(fd, tensors, metadata, o));
}

/** One tensor's entry in a header, checked against the data section's length. */
interface TensorInfo {
  name: string;
  dtype: string;
  shape: number[];
  begin: number;
  count: number;
}

/** Parses and checks a header; every problem is a UserError naming `source`. */
function parseHeader(headerBytes: Uint8Array, dataLen: number, source: string): { infos: TensorInfo[]; metadata: Record<string, string> } {
  const bad = (msg: string) => new UserError(`corrupt safetensors file ${source}: ${msg}`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(headerBytes.buffer, headerBytes.byteOffset, headerBytes.byteLength).toString('utf8')) as Record<string, unknown>;
  } catch (e) {
    throw bad(`header is not JSON (${(e as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw bad('header is not a JSON object');
  const metadata: Record<string, string> = {};
  const infos: TensorInfo[] = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') {
      for (const [k, v] of Object.entries((raw ?? {}) as Record<string, unknown>)) metadata[k] = String(v);
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const dtype = String(info?.dtype);
    const shape = info?.shape;
    const offsets = info?.data_offsets;
    if (!(dtype in DTYPE_BYTES)) throw bad(`tensor ${name}: unknown dtype ${dtype}`);
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) throw bad(`tensor ${name}: bad shape`);
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((x) => Number.isInteger(x))) throw bad(`tensor ${name}: bad data_offsets`);
    const [begin, end] = offsets as [number, number];
    const count = (shape as number[]).reduce((a, b) => a * b, 1);
    if (begin < 0 || end < begin || end > dataLen) throw bad(`tensor ${name}: data_offsets [${begin}, ${end}] outside the ${dataLen} data bytes`);
    if (end - begin !== count * DTYPE_BYTES[dtype]) throw bad(`tensor ${name}: ${end - begin} bytes for shape [${shape}] of ${dtype}`);
    infos.push({ name, dtype, shape: shape as number[], begin, count });
  }
  return { infos, metadata };
}

/** Parses a whole-file buffer (small files, tests); `source` names the file in error messages. */
export function decodeSafetensors(buf: Buffer, source = '(buffer)'): SafetensorsFile {
  if (buf.length < 8) throw new UserError(`corrupt safetensors file ${source}: only ${buf.length} bytes`);
  const headerLen = Number(buf.readBigUInt64LE(0));
  checkHeaderLen(headerLen, buf.length, source);
  const dataStart = 8 + headerLen;
  const { infos, metadata } = parseHeader(buf.subarray(8, dataStart), buf.length - dataStart, source);
  const tensors: TensorMap = new Map();
  for (const t of infos) {
    const out = new Float32Array(t.count);
    convertInto(out, 0, buf.subarray(dataStart + t.begin, dataStart + t.begin + t.count * DTYPE_BYTES[t.dtype]), t, source);
    tensors.set(t.name, { shape: t.shape, data: out });
  }
  return { tensors, metadata };
}

function checkHeaderLen(headerLen: number, fileLen: number, source: string): void {
  if (headerLen > fileLen - 8 || headerLen > MAX_HEADER_BYTES) {
    throw new UserError(`corrupt safetensors file ${source}: header length ${headerLen} exceeds the file (${fileLen} bytes)`);
  }
}

/** Reads exactly `bytes.length` bytes at `position`, in calls of at most `chunk` bytes. */
function readAllAt(fd: number, bytes: Uint8Array, position: number, chunk: number, source: string): void {
  let done = 0;
  while (done < bytes.length) {
    const n = fs.readSync(fd, bytes, done, Math.min(chunk, bytes.length - done), position + done);
    if (n === 0) throw new UserError(`corrupt safetensors file ${source}: ends early (the file shrank while being read)`);
    done += n;
  }
}

/**
 * Reads a safetensors file tensor by tensor with positioned reads, so files of any size load
 * (each tensor still has to fit one Float32Array). F32 is read straight into the tensor's memory.
 */
export function readSafetensors(file: string, o: StreamOptions = {}): SafetensorsFile {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    return readSafetensorsFd(fd, file, chunkOf(o));
  } finally {
    fs.closeSync(fd);
  }
}

function readSafetensorsFd(fd: number, source: string, chunk: number): SafetensorsFile {
  const size = fs.fstatSync(fd).size;
  if (size < 8) throw new UserError(`corrupt safetensors file ${source}: only ${size} bytes`);
  const lenBuf = Buffer.alloc(8);
  readAllAt(fd, lenBuf, 0, chunk, source);
  const headerLen = Number(lenBuf.readBigUInt64LE(0));
  checkHeaderLen(headerLen, size, source);
  const headerBytes = Buffer.alloc(headerLen);
  readAllAt(fd, headerBytes, 8, chunk, source);
  const dataStart = 8 + headerLen;
  const { infos, metadata } = parseHeader(headerBytes, size - dataStart, source);
  const tensors: TensorMap = new Map();
  let scratch: Buffer | undefined;
  for (const t of infos) {
    const out = new Float32Array(t.count);
    const width = DTYPE_BYTES[t.dtype];
    const start = dataStart + t.begin;
    if (t.dtype === 'F32' && isLittleEndian) {
      readAllAt(fd, new Uint8Array(out.buffer), start, chunk, source);
    } else {
      if (!FLOAT_DTYPES.has(t.dtype)) throw notFloat(t, source);
      scratch ??= Buffer.alloc(chunk);
      const perChunk = chunk / width; // chunk is a multiple of 8, so of every width
      for (let i = 0; i < t.count; i += perChunk) {
        const k = Math.min(perChunk, t.count - i);
        const raw = scratch.subarray(0, k * width);
        readAllAt(fd, raw, start + i * width, chunk, source);
        convertInto(out, i, raw, { ...t, count: k }, source);
      }
    }
    tensors.set(t.name, { shape: t.shape, data: out });
  }
  return { tensors, metadata };
}

const FLOAT_DTYPES = new Set(['F32', 'F64', 'F16', 'BF16']);
const notFloat = (t: Pick<TensorInfo, 'name' | 'dtype'>, source: string) =>
  new UserError(`${source}: tensor ${t.name} has dtype ${t.dtype}; only float tensors can be loaded as weights`);

/** Converts `t.count` values of `t.dtype` from `raw` into out[at..]. */
function convertInto(out: Float32Array, at: number, raw: Uint8Array, t: Pick<TensorInfo, 'name' | 'dtype' | 'count'>, source: string): void {
  const n = t.count;
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  switch (t.dtype) {
    case 'F32':
      if (isLittleEndian) new Uint8Array(out.buffer, out.byteOffset + 4 * at, 4 * n).set(raw.subarray(0, 4 * n));
      else for (let i = 0; i < n; i++) out[at + i] = view.getFloat32(4 * i, true);
      break;
    case 'F64':
      for (let i = 0; i < n; i++) out[at + i] = view.getFloat64(8 * i, true);
      break;
    case 'BF16': {
      const u = new Uint32Array(out.buffer, out.byteOffset);
      for (let i = 0; i < n; i++) u[at + i] = view.getUint16(2 * i, true) << 16;
      break;
    }
    case 'F16':
      for (let i = 0; i < n; i++) out[at + i] = halfToFloat(view.getUint16(2 * i, true));
      break;
    default:
      throw notFloat(t, source);
  }
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

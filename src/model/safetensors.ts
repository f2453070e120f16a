import { replaceFileAtomic } from '../util/fsync';
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
 * and renamed, so a crash never leaves a half-written file under the real name.
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

export function encodeSafetensors(tensors: TensorMap | Array<[string, NamedTensor]>, metadata: Record<string, string> = {}): Buffer {
  const entries = tensors instanceof Map ? [...tensors.entries()] : tensors;
  const header: Record<string, unknown> = {};
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const [name, t] of entries) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    if (n !== t.data.length) throw new Error(`safetensors: ${name} has shape [${t.shape}] but ${t.data.length} values`);
    if (name === '__metadata__') throw new Error('safetensors: "__metadata__" is reserved');
    header[name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + 4 * n] };
    offset += 4 * n;
  }
  let json = JSON.stringify(header);
  const jsonBytes = Buffer.byteLength(json);
  json += ' '.repeat((8 - (jsonBytes % 8)) % 8);
  const headerBuf = Buffer.from(json, 'utf8');
  const out = Buffer.alloc(8 + headerBuf.length + offset);
  out.writeBigUInt64LE(BigInt(headerBuf.length), 0);
  headerBuf.copy(out, 8);
  let pos = 8 + headerBuf.length;
  for (const [, t] of entries) {
    const bytes = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    if (isLittleEndian) bytes.copy(out, pos);
    else throw new Error('safetensors: big-endian hosts are not supported');
    pos += bytes.length;
  }
  return out;
}

const isLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export function writeSafetensors(file: string, tensors: TensorMap | Array<[string, NamedTensor]>, metadata: Record<string, string> = {}): void {
  const buf = encodeSafetensors(tensors, metadata);
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  replaceFileAtomic(file, buf);
}

/** Parses a safetensors buffer; `source` names the file in error messages. */
export function decodeSafetensors(buf: Buffer, source = '(buffer)'): SafetensorsFile {
  const bad = (msg: string) => new UserError(`corrupt safetensors file ${source}: ${msg}`);
  if (buf.length < 8) throw bad(`only ${buf.length} bytes`);
  const headerLen = Number(buf.readBigUInt64LE(0));
  if (headerLen > buf.length - 8 || headerLen > 100 * 2 ** 20) throw bad(`header length ${headerLen} exceeds the file (${buf.length} bytes)`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8')) as Record<string, unknown>;
  } catch (e) {
    throw bad(`header is not JSON (${(e as Error).message})`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw bad('header is not a JSON object');
  const dataStart = 8 + headerLen;
  const dataLen = buf.length - dataStart;
  const metadata: Record<string, string> = {};
  const tensors: TensorMap = new Map();
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
    if (!Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isInteger(o))) throw bad(`tensor ${name}: bad data_offsets`);
    const [begin, end] = offsets as [number, number];
    const n = (shape as number[]).reduce((a, b) => a * b, 1);
    if (begin < 0 || end < begin || end > dataLen) throw bad(`tensor ${name}: data_offsets [${begin}, ${end}] outside the ${dataLen} data bytes`);
    if (end - begin !== n * DTYPE_BYTES[dtype]) throw bad(`tensor ${name}: ${end - begin} bytes for shape [${shape}] of ${dtype}`);
    tensors.set(name, { shape: shape as number[], data: toFloat32(buf, dataStart + begin, n, dtype, name, source) });
  }
  return { tensors, metadata };
}

export function readSafetensors(file: string): SafetensorsFile {
  let buf: Buffer;
  try {
    buf = fs.readFileSync(file);
  } catch (e) {
    throw new UserError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return decodeSafetensors(buf, file);
}

function toFloat32(buf: Buffer, start: number, n: number, dtype: string, name: string, source: string): Float32Array {
  const out = new Float32Array(n);
  const view = new DataView(buf.buffer, buf.byteOffset + start, n * DTYPE_BYTES[dtype]);
  switch (dtype) {
    case 'F32':
      for (let i = 0; i < n; i++) out[i] = view.getFloat32(4 * i, true);
      break;
    case 'F64':
      for (let i = 0; i < n; i++) out[i] = view.getFloat64(8 * i, true);
      break;
    case 'BF16': {
      const u = new Uint32Array(out.buffer);
      for (let i = 0; i < n; i++) u[i] = view.getUint16(2 * i, true) << 16;
      break;
    }
    case 'F16':
      for (let i = 0; i < n; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
      break;
    default:
      throw new UserError(`${source}: tensor ${name} has dtype ${dtype}; only float tensors can be loaded as weights`);
  }
  return out;
}

function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

import * as fs from 'fs';
import * as path from 'path';
import { decodeSafetensors, encodeSafetensors, readSafetensors, writeSafetensors, writeSafetensorsFd } from '../../src/model/safetensors';
import { replaceFileAtomicWith } from '../../src/util/fsync';
import { tempDir } from '../helpers/tmp';

/** Values whose bytes differ everywhere, including NaN payloads and denormals. */
function tensor(n: number, seed: number): Float32Array {
  const a = new Float32Array(n);
  const u = new Uint32Array(a.buffer);
  for (let i = 0; i < n; i++) u[i] = (Math.imul(i + 1, 2654435761) ^ seed) >>> 0;
  return a;
}
const sameBits = (a: Float32Array, b: Float32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe('safetensors streamed tensor by tensor', () => {
  const tensors = new Map([
    ['odd', { shape: [7, 13], data: tensor(91, 1) }], // 364 bytes: not a multiple of any chunk below
    ['one', { shape: [1], data: tensor(1, 2) }],
    ['empty', { shape: [0], data: new Float32Array(0) }],
    ['big', { shape: [1000], data: tensor(1000, 3) }],
  ]);

  test.each([8, 24, 1000, undefined])('chunks of %s bytes write the same bytes as the one-buffer encoder and read back bit for bit', (chunkBytes) => {
    const dir = tempDir('st-stream');
    const file = path.join(dir, 'w.safetensors');
    writeSafetensors(file, tensors, { format: 'pt' }, { chunkBytes });
    expect(fs.readFileSync(file).equals(encodeSafetensors(tensors, { format: 'pt' }))).toBe(true);
    const back = readSafetensors(file, { chunkBytes });
    expect(back.metadata).toEqual({ format: 'pt' });
    expect([...back.tensors.keys()]).toEqual([...tensors.keys()]);
    for (const [k, t] of tensors) {
      expect(back.tensors.get(k)!.shape).toEqual(t.shape);
      expect(sameBits(back.tensors.get(k)!.data, t.data)).toBe(true);
    }
  });

  test('converted dtypes (bf16, f16, f64) are read slice by slice like the whole-buffer decoder', () => {
    const n = 37; // 74/74/296 bytes, cut by 16-byte chunks mid-tensor
    const bf = Buffer.alloc(2 * n);
    const f16 = Buffer.alloc(2 * n);
    const f64 = Buffer.alloc(8 * n);
    for (let i = 0; i < n; i++) {
      bf.writeUInt16LE((0x3f80 + 3 * i) & 0xffff, 2 * i);
      f16.writeUInt16LE((0x3c00 + 17 * i) & 0xffff, 2 * i);
      f64.writeDoubleLE(i / 7 - 2, 8 * i);
    }
    const header = JSON.stringify({
      b: { dtype: 'BF16', shape: [n], data_offsets: [0, 2 * n] },
      h: { dtype: 'F16', shape: [n], data_offsets: [2 * n, 4 * n] },
      d: { dtype: 'F64', shape: [n], data_offsets: [4 * n, 12 * n] },
    });
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(header.length));
    const whole = Buffer.concat([len, Buffer.from(header), bf, f16, f64]);
    const file = path.join(tempDir('st-dtypes'), 'x.safetensors');
    fs.writeFileSync(file, whole);
    const want = decodeSafetensors(whole).tensors;
    const got = readSafetensors(file, { chunkBytes: 16 }).tensors;
    for (const k of ['b', 'h', 'd']) expect(Array.from(got.get(k)!.data)).toEqual(Array.from(want.get(k)!.data));
    expect(got.get('d')!.data[8]).toBeCloseTo(8 / 7 - 2, 6);
  });

  test('a file cut short or a header past the end is a clear error naming the file', () => {
    const dir = tempDir('st-corrupt');
    const file = path.join(dir, 'cut.safetensors');
    writeSafetensors(file, tensors);
    fs.truncateSync(file, fs.statSync(file).size - 4);
    expect(() => readSafetensors(file)).toThrow(/corrupt safetensors file .*cut\.safetensors: tensor big: data_offsets \[.*\] outside/);
    fs.writeFileSync(file, Buffer.from([255, 0, 0, 0, 0, 0, 0, 0, 1, 2]));
    expect(() => readSafetensors(file)).toThrow(/header length 255 exceeds the file \(10 bytes\)/);
    expect(() => readSafetensors(path.join(dir, 'none.safetensors'))).toThrow(/cannot read .*none\.safetensors: ENOENT/);
  });

  test('a write that fails half way leaves the previous file whole and no temp file', () => {
    const dir = tempDir('st-atomic');
    const file = path.join(dir, 'w.safetensors');
    writeSafetensors(file, tensors);
    const before = fs.readFileSync(file);
    expect(() =>
      replaceFileAtomicWith(file, (fd) => {
        writeSafetensorsFd(fd, new Map([['x', { shape: [4], data: tensor(4, 9) }]]));
        throw new Error('disk full (simulated)');
      }),
    ).toThrow(/disk full/);
    expect(fs.readFileSync(file).equals(before)).toBe(true);
    expect(fs.readdirSync(dir)).toEqual(['w.safetensors']);
  });

  // A real file past Node's 2 GiB readFileSync limit: 2.4 GB on disk and ~5 GB of memory, so opt-in.
  const big = process.env.NDBG_BIG_CHECKPOINT === '1' ? test : test.skip;
  big('a 2.4 GB file round-trips (skipped unless NDBG_BIG_CHECKPOINT=1)', () => {
    const dir = tempDir('st-big');
    const file = path.join(dir, 'big.safetensors');
    const n = 300_000_000; // two tensors of 1.2 GB: the file is past 2 GiB, each tensor under 4 GiB
    const a = tensor(n, 11);
    const b = tensor(n, 12);
    writeSafetensors(file, [['a', { shape: [n], data: a }], ['b', { shape: [n / 1000, 1000], data: b }]]);
    expect(fs.statSync(file).size).toBeGreaterThan(2 ** 31);
    expect(() => fs.readFileSync(file)).toThrow(/ERR_FS_FILE_TOO_LARGE|greater than 2 GiB/);
    const back = readSafetensors(file).tensors;
    expect(sameBits(back.get('a')!.data, a)).toBe(true);
    expect(sameBits(back.get('b')!.data, b)).toBe(true);
    expect(back.get('b')!.shape).toEqual([n / 1000, 1000]);
  }, 600_000);
});

import * as fs from 'fs';
import * as path from 'path';
import { decodeSafetensors, encodeSafetensors, readSafetensors, writeSafetensors } from '../../src/model/safetensors';
import { UserError } from '../../src/util/errors';
import { tempDir } from '../helpers/tmp';

describe('safetensors', () => {
  const tensors = new Map([
    ['a.weight', { shape: [2, 3], data: Float32Array.from([1, -2, 3.5, 4, 5, 6e-8]) }],
    ['scalarish', { shape: [1], data: Float32Array.from([Math.PI]) }],
    ['empty', { shape: [0, 4], data: new Float32Array(0) }],
  ]);

  test('byte layout follows the format: u64 header length, JSON header, little-endian data', () => {
    const buf = encodeSafetensors(tensors, { format: 'pt' });
    const n = Number(buf.readBigUInt64LE(0));
    expect(n % 8).toBe(0); // header padded to 8 bytes
    const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
    expect(header.__metadata__).toEqual({ format: 'pt' });
    expect(header['a.weight']).toEqual({ dtype: 'F32', shape: [2, 3], data_offsets: [0, 24] });
    expect(header.scalarish.data_offsets).toEqual([24, 28]);
    expect(buf.readFloatLE(8 + n + 8)).toBe(3.5);
    expect(buf.length).toBe(8 + n + 28);
  });

  test('round trip through a file is exact, metadata included', () => {
    const dir = tempDir('safetensors');
    const file = path.join(dir, 'x.safetensors');
    writeSafetensors(file, tensors, { step: '12' });
    const back = readSafetensors(file);
    expect(back.metadata).toEqual({ step: '12' });
    expect([...back.tensors.keys()]).toEqual(['a.weight', 'scalarish', 'empty']);
    for (const [k, t] of tensors) {
      expect(back.tensors.get(k)!.shape).toEqual(t.shape);
      expect(Array.from(back.tensors.get(k)!.data)).toEqual(Array.from(t.data));
    }
    expect(fs.readdirSync(dir)).toEqual(['x.safetensors']); // no temp file left
  });

  test('reads bf16, f16 and f64 as float32', () => {
    const header = JSON.stringify({
      h: { dtype: 'F16', shape: [3], data_offsets: [0, 6] },
      b: { dtype: 'BF16', shape: [2], data_offsets: [6, 10] },
      d: { dtype: 'F64', shape: [1], data_offsets: [10, 18] },
    });
    const data = Buffer.alloc(18);
    data.writeUInt16LE(0x3c00, 0); // 1.0
    data.writeUInt16LE(0xc000, 2); // -2.0
    data.writeUInt16LE(0x3555, 4); // 0.333251953125
    data.writeUInt16LE(0x3fc0, 6); // bf16 1.5
    data.writeUInt16LE(0xc0a0, 8); // bf16 -5
    data.writeDoubleLE(0.1, 10);
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(header.length));
    const t = decodeSafetensors(Buffer.concat([len, Buffer.from(header), data])).tensors;
    expect(Array.from(t.get('h')!.data)).toEqual([1, -2, 0.333251953125]);
    expect(Array.from(t.get('b')!.data)).toEqual([1.5, -5]);
    expect(t.get('d')!.data[0]).toBeCloseTo(0.1, 7);
  });

  test('corrupt files give one clear UserError naming the file', () => {
    const good = encodeSafetensors(tensors);
    const cases: Array<[Buffer, RegExp]> = [
      [good.subarray(0, 5), /only 5 bytes/],
      [good.subarray(0, good.length - 4), /outside the .* data bytes/],
      [Buffer.concat([Buffer.from([200, 0, 0, 0, 0, 0, 0, 0]), Buffer.alloc(10)]), /header length 200/],
    ];
    const badJson = Buffer.from(good);
    badJson[9] = 0x7b; // '{' where '"' belongs
    cases.push([badJson, /not JSON/]);
    for (const [buf, re] of cases) {
      expect(() => decodeSafetensors(buf, 'w.safetensors')).toThrow(UserError);
      expect(() => decodeSafetensors(buf, 'w.safetensors')).toThrow(re);
      expect(() => decodeSafetensors(buf, 'w.safetensors')).toThrow(/w\.safetensors/);
    }
    expect(() => encodeSafetensors([['x', { shape: [2, 2], data: new Float32Array(3) }]])).toThrow(/shape \[2,2\] but 3 values/);
  });
});

import * as tf from '@tensorflow/tfjs-core';
import { initBackend } from '../../src/backend/backend';
import { Rng } from '../../src/util/rng';

/** The replaced wasm BatchMatMul and the added UnsortedSegmentSum agree with the cpu backend. */
describe('wasm kernels', () => {
  const rng = Rng.from(1, 'wasm-kernels');
  const rand = (shape: number[]) => Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => rng.normal());
  const cases: Array<[number[], number[], boolean, boolean]> = [
    [[5, 7], [7, 3], false, false],
    [[5, 7], [3, 7], false, true],
    [[7, 5], [7, 3], true, false],
    [[7, 5], [3, 7], true, true],
    [[40, 3], [40, 300], true, false], // swapped-product path
    [[2, 3, 5, 7], [2, 3, 7, 4], false, false],
    [[2, 3, 5, 7], [2, 3, 4, 7], false, true],
    [[2, 3, 7, 5], [2, 3, 7, 4], true, false],
    [[2, 3, 5, 7], [7, 4], false, false],
    [[6, 5, 7], [1, 7, 4], false, false],
    [[1, 5, 7], [6, 7, 4], false, false],
  ];
  const data = cases.map(([sa, sb]) => [rand(sa), rand(sb)]);

  async function run(backend: 'cpu' | 'wasm') {
    await initBackend(backend, () => undefined);
    const mm = cases.map(([sa, sb, ta, tb], i) => tf.tidy(() => tf.matMul(tf.tensor(data[i][0], sa), tf.tensor(data[i][1], sb), ta, tb).arraySync()));
    const seg = tf.tidy(() =>
      tf.unsortedSegmentSum(tf.tensor2d(data[0][1], [7, 3]), tf.tensor1d([2, 0, 2, 5, 1, 2, 0], 'int32'), 6).arraySync(),
    );
    return { mm, seg };
  }

  test('matmul and segment sum match the cpu backend; no tensors leak', async () => {
    const cpu = await run('cpu');
    const before = tf.memory().numTensors;
    const wasm = await run('wasm');
    expect(tf.memory().numTensors).toBe(before);
    cases.forEach((_, i) => {
      const a = (cpu.mm[i] as number[]).flat(3) as number[];
      const b = (wasm.mm[i] as number[]).flat(3) as number[];
      expect(b.length).toBe(a.length);
      a.forEach((v, j) => expect(Math.abs(v - b[j])).toBeLessThan(1e-4));
    });
    const sc = (cpu.seg as number[][]).flat();
    const sw = (wasm.seg as number[][]).flat();
    expect(sw.length).toBe(18);
    sc.forEach((v, j) => expect(Math.abs(v - sw[j])).toBeLessThan(1e-6));
    expect(sw.slice(9, 12)).toEqual([0, 0, 0]); // segment 3 receives nothing
  });
});

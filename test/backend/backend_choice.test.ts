import { planBackend, ChoiceInput } from '../../src/backend/backend_choice';

const inst = (gpu: boolean, cpu: boolean) => ({ 'tensorflow-gpu': gpu, tensorflow: cpu });
const plan = (i: Partial<ChoiceInput>) => planBackend({ requested: 'auto', installed: inst(false, false), gpuDevice: false, ...i });

describe('planBackend (device probes faked)', () => {
  it('GPU present: tensorflow-gpu, then the GPU build on the CPU', () => {
    expect(plan({ installed: inst(true, true), gpuDevice: true })).toEqual({
      steps: [{ backend: 'tensorflow-gpu', pkg: 'tensorflow-gpu' }, { backend: 'tensorflow', pkg: 'tensorflow-gpu' }], log: [] });
  });
  it('GPU addon without a device: the GPU build on the CPU, never wasm, says why', () => {
    const p = plan({ installed: inst(true, false) });
    expect(p).toEqual({ steps: [{ backend: 'tensorflow', pkg: 'tensorflow-gpu' }], log: [expect.stringMatching(/not using the GPU: no NVIDIA device/)] });
  });
  it('GPU addon loaded, no device: keeps the loaded GPU build', () => {
    expect(plan({ installed: inst(true, true), loaded: 'tensorflow-gpu' })).toMatchObject({ steps: [{ backend: 'tensorflow', pkg: 'tensorflow-gpu' }] });
  });
  it('both addons, no device: the CPU addon', () => {
    expect(plan({ installed: inst(true, true) })).toMatchObject({ steps: [{ backend: 'tensorflow', pkg: 'tensorflow' }] });
  });
  it('only the CPU addon', () => {
    expect(plan({ installed: inst(false, true), gpuDevice: true })).toEqual({ steps: [{ backend: 'tensorflow', pkg: 'tensorflow' }], log: [] });
  });
  it('none: wasm then cpu', () => {
    expect(plan({})).toEqual({ steps: [{ backend: 'wasm' }, { backend: 'cpu' }], log: [] });
  });
  it('explicit requests that cannot be met: one clear error', () => {
    expect(plan({ requested: 'tensorflow-gpu', installed: inst(true, true) })).toEqual({ error: expect.stringMatching(/tensorflow-gpu is unavailable: no NVIDIA device/) });
    expect(plan({ requested: 'tensorflow-gpu', gpuDevice: true })).toEqual({ error: expect.stringMatching(/tfjs-node-gpu is not installed/) });
    expect(plan({ requested: 'tensorflow-gpu', installed: inst(true, true), loaded: 'tensorflow', gpuDevice: true })).toEqual({ error: expect.stringMatching(/already loaded/) });
    expect(plan({ requested: 'tensorflow' })).toEqual({ error: expect.stringMatching(/tensorflow is unavailable/) });
  });
  it('explicit tensorflow with only the GPU build runs its CPU kernels', () => {
    expect(plan({ requested: 'tensorflow', installed: inst(true, false) })).toMatchObject({ steps: [{ backend: 'tensorflow', pkg: 'tensorflow-gpu' }] });
  });
});

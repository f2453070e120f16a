import { describeMachine, formatMachine, isaOf } from '../../src/util/machine';

describe('machine description', () => {
  test('names the widest vector ISA from the cpu flags', () => {
    expect(isaOf('fpu sse2 avx avx2 fma avx512f avx512bw', 'x64')).toBe('AVX-512');
    expect(isaOf('fpu sse2 avx avx2 fma', 'x64')).toBe('AVX2');
    expect(isaOf('fpu sse2 avx', 'x64')).toBe('AVX');
    expect(isaOf('fp asimd', 'arm64')).toBe('NEON');
    expect(isaOf('', 'x64')).toBe('x64');
  });

  test('describes this machine in one line', () => {
    const m = describeMachine();
    expect(m.cores).toBeGreaterThan(0);
    expect(formatMachine({ cpu: 'AMD EPYC 7B13', isa: 'AVX2', cores: 2, memoryGiB: 8 })).toBe('AMD EPYC 7B13 (AVX2, 2 cores)');
  });
});

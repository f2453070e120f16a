import { cpuinfoFlags, isaFromCpuinfo, peakFromCpuinfo } from '../../bench/cpu_isa';

// Abridged /proc/cpuinfo texts: an AVX2 EPYC, an AVX-512 Xeon with AMX (Sapphire Rapids), an arm64 box.
const epyc = 'processor\t: 0\nmodel name\t: AMD EPYC 7B13\ncpu MHz\t\t: 2450.000\nflags\t\t: fpu sse2 avx fma avx2 bmi2\n\nprocessor\t: 1\nflags\t\t: fpu\n';
const spr = 'model name\t: Intel(R) Xeon(R) Platinum 8480+\ncpu MHz\t\t: 2000.000\nflags\t\t: avx fma avx2 avx512f avx512bw amx_tile amx_bf16 amx_int8 avx512_fp16\n';
const arm = 'processor\t: 0\nFeatures\t: fp asimd evtstrm aes\n';

describe('cpu ISA from /proc/cpuinfo', () => {
  it('names the widest vector ISA, FMA and the AMX flags', () => {
    expect(isaFromCpuinfo(epyc, 'x64')).toEqual({ vector: 'AVX2', fma: true, amx: [], label: 'AVX2 + FMA, no AMX' });
    expect(isaFromCpuinfo(spr, 'x64')).toEqual({ vector: 'AVX-512', fma: true, amx: ['amx_bf16', 'amx_int8', 'amx_tile'], label: 'AVX-512 + FMA, AMX (amx_bf16, amx_int8, amx_tile)' });
    expect(isaFromCpuinfo(arm, 'arm64').label).toBe('NEON, no AMX');
    expect(isaFromCpuinfo('', 'x64').label).toBe('x64, no AMX');
  });

  it('reads the first flags line only, and not a flag that merely contains a name', () => {
    expect(cpuinfoFlags(epyc)).toEqual(['fpu', 'sse2', 'avx', 'fma', 'avx2', 'bmi2']);
    expect(isaFromCpuinfo('flags\t: avx512_vnni avx2\n', 'x64').vector).toBe('AVX2');
  });

  it('takes the nominal peak from MHz and the FLOPs per cycle of the ISA', () => {
    expect(peakFromCpuinfo(epyc, 2)).toEqual({ gflops: (2 * 2450 * 32) / 1000, basis: '2 cores × 2450 MHz × 32 FLOP/cycle' });
    expect(peakFromCpuinfo(spr, 4).gflops).toBe((4 * 2000 * 64) / 1000);
    expect(peakFromCpuinfo(arm, 1, 3000).basis).toBe('1 cores × 3000 MHz × 16 FLOP/cycle');
  });
});

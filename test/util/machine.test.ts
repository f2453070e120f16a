import { cpuQuotaOf, describeMachine, formatMachine, isaOf } from '../../src/util/machine';

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

  test('says when a CPU quota lets the process use less than its cores', () => {
    expect(formatMachine({ cpu: 'Intel Xeon', isa: 'AVX-512', cores: 2, memoryGiB: 24, cpuQuota: 0.9 })).toBe('Intel Xeon (AVX-512, 2 cores, a CPU quota of 0.9 of them)');
  });
});

describe('cpuQuotaOf', () => {
  const files = (entries: Record<string, string>) => (file: string) => entries[file];

  test('reads cgroup v2 cpu.max, the tightest of the process cgroup and its ancestors', () => {
    const read = files({
      '/proc/self/cgroup': '0::/ci/job\n',
      '/sys/fs/cgroup/ci/job/cpu.max': 'max 100000\n',
      '/sys/fs/cgroup/ci/cpu.max': '150000 100000\n',
    });
    expect(cpuQuotaOf(read)).toBe(1.5);
  });

  test('reads cgroup v1 cpu.cfs_quota_us over its period, under a combined cpu,cpuacct hierarchy too', () => {
    const v1 = (line: string) =>
      files({
        '/proc/self/cgroup': `4:memory:/x\n${line}\n0::/\n`,
        '/sys/fs/cgroup/cpu/ndbg-slow-7/cpu.cfs_quota_us': '90000\n',
        '/sys/fs/cgroup/cpu/ndbg-slow-7/cpu.cfs_period_us': '100000\n',
        '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n',
        '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n',
      });
    expect(cpuQuotaOf(v1('1:cpu:/ndbg-slow-7'))).toBe(0.9);
    expect(cpuQuotaOf(v1('3:cpu,cpuacct:/ndbg-slow-7'))).toBe(0.9);
  });

  test('is undefined with no quota set anywhere, and off Linux', () => {
    expect(cpuQuotaOf(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/cpu.max': 'max 100000\n' }))).toBeUndefined();
    expect(cpuQuotaOf(files({ '/proc/self/cgroup': '1:cpu:/\n', '/sys/fs/cgroup/cpu/cpu.cfs_quota_us': '-1\n', '/sys/fs/cgroup/cpu/cpu.cfs_period_us': '100000\n' }))).toBeUndefined();
    expect(cpuQuotaOf(files({}))).toBeUndefined();
  });
});

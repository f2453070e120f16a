import * as fs from 'fs';
import * as os from 'os';

/**
 * The machine a run was measured on, in the few facts that decide training speed on CPU: the
 * processor, its widest vector extension, the cores and the share of them the process may use.
 * Recorded beside every time-dependent figure (tokens/s, minutes) so a reader can tell a slower
 * machine from a slower recipe.
 */
export interface MachineDescription {
  cpu: string;
  /** Widest vector ISA the kernels can use: AVX-512, AVX2, AVX, NEON, or the architecture. */
  isa: string;
  /** Cores the system shows (os.cpus()), whether or not a quota lets the process use them all. */
  cores: number;
  memoryGiB: number;
  /**
   * CPUs' worth of time per period that the process's cgroup allows (a container's `--cpus`, a
   * Kubernetes limit, bench/slow-machine.sh), where that is less than `cores`; absent without a
   * quota. Such a machine trains slower than its cores say.
   */
  cpuQuota?: number;
}

/** The vector ISA named by /proc/cpuinfo's flags (Linux), else the architecture's usual one. */
export function isaOf(flags: string, arch: string = os.arch()): string {
  const has = new Set(flags.split(/\s+/));
  if (has.has('avx512f')) return 'AVX-512';
  if (has.has('avx2')) return 'AVX2';
  if (has.has('avx')) return 'AVX';
  if (arch === 'arm64') return 'NEON';
  return arch;
}

function cpuFlags(): string {
  try {
    const text = fs.readFileSync('/proc/cpuinfo', 'utf8');
    return /^(?:flags|Features)\s*:\s*(.*)$/m.exec(text)?.[1] ?? '';
  } catch {
    return ''; // not Linux: the architecture stands in
  }
}

/** Reads a file's text, or undefined where it is not there (another cgroup version, not Linux). */
export type ReadText = (file: string) => string | undefined;

const readText: ReadText = (file) => {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/**
 * The tightest CPU quota on the process's cgroup and its ancestors, in CPUs (quota / period),
 * from /proc/self/cgroup and the cgroup files under `root`: cgroup v2's `cpu.max` ("90000
 * 100000", or "max" for none) or v1's `cpu.cfs_quota_us` (-1 for none) and `cpu.cfs_period_us`.
 * Undefined where no level sets one.
 */
export function cpuQuotaOf(read: ReadText = readText, root = '/sys/fs/cgroup'): number | undefined {
  const lines = read('/proc/self/cgroup')?.split('\n') ?? [];
  const v2 = lines.find((l) => l.startsWith('0::'))?.slice(3);
  const v1 = lines.map((l) => l.split(':')).find(([, controllers]) => controllers?.split(',').includes('cpu'))?.[2];
  const quotas: number[] = [];
  for (const dir of ancestors(v2)) {
    const [quota, period] = (read(`${root}${dir}/cpu.max`) ?? '').trim().split(/\s+/);
    if (Number(quota) > 0 && Number(period) > 0) quotas.push(Number(quota) / Number(period));
  }
  for (const dir of ancestors(v1)) {
    const quota = Number(read(`${root}/cpu${dir}/cpu.cfs_quota_us`));
    const period = Number(read(`${root}/cpu${dir}/cpu.cfs_period_us`));
    if (quota > 0 && period > 0) quotas.push(quota / period);
  }
  return quotas.length > 0 ? Math.min(...quotas) : undefined;
}

/** "/a/b" → "/a/b", "/a", "" (the cgroup and every level above it, the root last). */
function ancestors(dir: string | undefined): string[] {
  if (dir === undefined) return [];
  const parts = dir.split('/').filter((p) => p !== '');
  return parts.map((_, i) => '/' + parts.slice(0, parts.length - i).join('/')).concat('');
}

export function describeMachine(): MachineDescription {
  const cpus = os.cpus();
  const quota = cpuQuotaOf();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    isa: isaOf(cpuFlags()),
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    ...(quota !== undefined && quota < cpus.length ? { cpuQuota: Number(quota.toFixed(2)) } : {}),
  };
}

/** "AMD EPYC 7B13 (AVX2, 2 cores)", "… (AVX2, 2 cores, a CPU quota of 0.9 of them)" */
export function formatMachine(m: MachineDescription): string {
  const quota = m.cpuQuota !== undefined ? `, a CPU quota of ${m.cpuQuota} of them` : '';
  return `${m.cpu} (${m.isa}, ${m.cores} core${m.cores === 1 ? '' : 's'}${quota})`;
}

import * as fs from 'fs';
import * as os from 'os';

/**
 * The machine a run was measured on, in the few facts that decide training speed on CPU: the
 * processor, its widest vector extension and the cores. Recorded beside every time-dependent
 * figure (tokens/s, minutes) so a reader can tell a slower machine from a slower recipe.
 */
export interface MachineDescription {
  cpu: string;
  /** Widest vector ISA the kernels can use: AVX-512, AVX2, AVX, NEON, or the architecture. */
  isa: string;
  cores: number;
  memoryGiB: number;
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

export function describeMachine(): MachineDescription {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    isa: isaOf(cpuFlags()),
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  };
}

/** "AMD EPYC 7B13 (AVX2, 2 cores)" */
export function formatMachine(m: MachineDescription): string {
  return `${m.cpu} (${m.isa}, ${m.cores} core${m.cores === 1 ? '' : 's'})`;
}

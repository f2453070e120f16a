import * as fs from 'fs';
import * as os from 'os';
import { isaOf } from '../src/util/machine';

/**
 * The CPU facts the model bench prints before any figure: the widest vector ISA (from
 * src/util/machine.ts, the one every result records), FMA, and AMX (Intel's tile units: a
 * BLAS with AMX kernels runs bf16/int8 products several times faster, and none of the fp32
 * figures here use them, so a reader needs to know they were there).
 */
export interface CpuIsa {
  /** AVX-512, AVX2, AVX, NEON or the architecture (isaOf). */
  vector: string;
  fma: boolean;
  /** The AMX flags present (amx_tile, amx_bf16, amx_int8, …); empty without AMX. */
  amx: string[];
  /** One line: "AVX-512 + FMA, AMX (amx_bf16, amx_tile)" or "AVX2 + FMA, no AMX". */
  label: string;
}

/** The first `flags` (x86) or `Features` (arm) line of a /proc/cpuinfo text, split; [] when absent. */
export function cpuinfoFlags(cpuinfo: string): string[] {
  const line = /^(?:flags|Features)\s*:(.*)$/m.exec(cpuinfo)?.[1] ?? '';
  return line.split(/\s+/).filter(Boolean);
}

export function isaFromCpuinfo(cpuinfo: string, arch: string = os.arch()): CpuIsa {
  const flags = cpuinfoFlags(cpuinfo);
  const vector = isaOf(flags.join(' '), arch);
  const fma = flags.includes('fma');
  const amx = flags.filter((f) => f.startsWith('amx')).sort();
  const label = `${vector}${fma ? ' + FMA' : ''}, ${amx.length ? `AMX (${amx.join(', ')})` : 'no AMX'}`;
  return { vector, fma, amx, label };
}

/**
 * Nominal fp32 peak in GFLOP/s: cores × MHz × FLOPs/cycle, 64 with AVX-512 (2 FMA units × 16
 * lanes × 2), 32 with AVX2+FMA, 16 otherwise. A documented assumption, not a measurement: MFU
 * is against it, and the measured matmul rates beside it say what is reachable.
 */
export function peakFromCpuinfo(cpuinfo: string, cores: number, fallbackMhz = 0): { gflops: number; basis: string } {
  const flags = cpuinfoFlags(cpuinfo);
  const mhz = Number(/^cpu MHz\s*:\s*([\d.]+)/m.exec(cpuinfo)?.[1] ?? fallbackMhz);
  const perCycle = flags.includes('avx512f') ? 64 : flags.includes('fma') ? 32 : 16;
  return { gflops: (cores * mhz * perCycle) / 1000, basis: `${cores} cores × ${mhz} MHz × ${perCycle} FLOP/cycle` };
}

/** This machine's /proc/cpuinfo, or '' off Linux (the architecture then stands in for the ISA). */
export function readCpuinfo(): string {
  try {
    return fs.readFileSync('/proc/cpuinfo', 'utf8');
  } catch {
    return '';
  }
}

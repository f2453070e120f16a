import { execSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { describeMachine } from '../src/util/machine';
import { packageRoot } from '../src/util/paths';

/**
 * Every benchmark result carries the machine, commit and date, and is written to
 * bench/results/<name>.json (latest) plus appended to bench/results/history.jsonl.
 */
export interface BenchEnvironment {
  date: string;
  commit: string;
  node: string;
  python: string;
  cpus: string;
  cores: number;
  memoryGiB: number;
  /** CPUs a cgroup quota allows, where fewer than the cores (src/util/machine.ts). */
  cpuQuota?: number;
}

export function benchEnvironment(): BenchEnvironment {
  const sh = (cmd: string) => {
    try {
      return execSync(cmd, { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    } catch {
      return 'unknown';
    }
  };
  const machine = describeMachine();
  return {
    date: new Date().toISOString(),
    commit: sh('git rev-parse --short HEAD'),
    node: process.version,
    python: sh('python3 --version'),
    cpus: machine.cpu,
    cores: machine.cores,
    memoryGiB: machine.memoryGiB,
    ...(machine.cpuQuota !== undefined ? { cpuQuota: machine.cpuQuota } : {}),
  };
}

export function writeBenchResult(name: string, result: Record<string, unknown>): string {
  const dir = path.join(packageRoot(), 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  const record = { name, environment: benchEnvironment(), ...result };
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
  fs.appendFileSync(path.join(dir, 'history.jsonl'), JSON.stringify(record) + '\n');
  return file;
}

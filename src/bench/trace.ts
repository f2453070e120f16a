import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { assetPath } from '../util/paths';
import { entryReturnValue, traceBatch } from '../trace/index';
import { probeBwrap } from '../trace/isolation';
import { SandboxPool } from '../trace/pool';
import type { ProgramRecord } from '../trace/types';

/**
 * `npm run bench -- trace`: sandboxed tracing throughput against raw in-process settrace on the
 * same programs in the same run (CruxEval when /work/shared/data/cruxeval.jsonl or
 * $NDBG_CRUXEVAL exists, else the test fixture).
 *
 * - raw: tracer.trace_program in one Python process (no fork, no sandbox, no JSON).
 * - naive fork-per-program: fork + trace + JSON to a pipe, nothing else (the harness the issue
 *   measured at 300-370 programs/s), to show what the sandbox adds on top of a plain fork.
 * - sandboxed, 1 worker: programs/s by wall clock, and programs per CPU-second of the worker
 *   plus its forked children (= programs/s/core, robust to other load on a shared machine),
 *   and events/s.
 * - sandboxed, 2 workers: wall-clock programs/s.
 * - check: on the sandboxed run, how many programs ended `normal` with f's return repr equal to
 *   the `output` field.
 */
type Prog = ProgramRecord & { output?: string };

function loadPrograms(): { source: string; programs: Prog[] } {
  const candidates = [process.env.NDBG_CRUXEVAL, '/work/shared/data/cruxeval.jsonl'].filter(Boolean) as string[];
  for (const file of candidates) {
    if (fs.existsSync(file)) return { source: file, programs: readPrograms(file) };
  }
  const fixture = assetPath('test/fixtures/trace/programs.jsonl');
  return { source: fixture, programs: readPrograms(fixture) };
}

function readPrograms(file: string): Prog[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Prog);
}

function raw(programs: Prog[], repeat: number, mode: 'raw' | 'fork' = 'raw'): { programs: number; seconds: number; cpu_seconds: number; events: number } {
  const input = programs.map((p) => JSON.stringify(p)).join('\n') + '\n';
  const out = execFileSync('python3', ['-S', assetPath('src/bench/trace_inprocess.py'), String(repeat), mode], {
    input,
    env: { ...process.env, PYTHONHASHSEED: '0' },
    maxBuffer: 1 << 26,
  });
  return JSON.parse(out.toString()) as { programs: number; seconds: number; cpu_seconds: number; events: number };
}

async function sandboxed(programs: Prog[], mode: 'bwrap' | 'guards', workers: number) {
  const pool = new SandboxPool(workers, { isolation: mode });
  try {
    for await (const r of traceBatch(programs.slice(0, 20), { pool })) void r; // warm-up
    const cpu0 = await pool.cpuSeconds();
    const node0 = process.cpuUsage();
    const t0 = performance.now();
    let events = 0;
    let normal = 0;
    let match = 0;
    let i = 0;
    for await (const r of traceBatch(programs, { pool })) {
      const p = programs[i++];
      events += r.events.length;
      if (r.status === 'normal') {
        normal++;
        if (p.output !== undefined && entryReturnValue(r) === p.output) match++;
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    const workerCpu = (await pool.cpuSeconds()) - cpu0;
    const nodeUsage = process.cpuUsage(node0);
    const nodeCpu = (nodeUsage.user + nodeUsage.system) / 1e6;
    return {
      isolation: pool.mode,
      workers,
      programs: programs.length,
      seconds: round(seconds),
      programs_per_s: round(programs.length / seconds),
      events_per_s: round(events / seconds),
      worker_cpu_seconds: round(workerCpu),
      node_cpu_seconds: round(nodeCpu),
      programs_per_cpu_s_worker: round(programs.length / workerCpu),
      programs_per_cpu_s_total: round(programs.length / (workerCpu + nodeCpu)),
      events,
      normal,
      output_match: match,
    };
  } finally {
    await pool.close();
  }
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { source, programs } = loadPrograms();
  const repeat = Number(args.find((a) => a.startsWith('--repeat='))?.split('=')[1] ?? 3);
  const modes: Array<'bwrap' | 'guards'> = probeBwrap().ok ? ['bwrap', 'guards'] : ['guards'];
  const rawBefore = raw(programs, repeat);
  const forkBefore = raw(programs, 1, 'fork');
  const runs: Record<string, unknown>[] = [];
  for (const mode of modes) runs.push(await sandboxed(programs, mode, 1));
  runs.push(await sandboxed(programs, modes[0], 2));
  const rawAfter = raw(programs, repeat);
  const forkAfter = raw(programs, 1, 'fork');
  const forkRate = (forkBefore.programs + forkAfter.programs) / (forkBefore.seconds + forkAfter.seconds);
  const forkCpuRate = (forkBefore.programs + forkAfter.programs) / (forkBefore.cpu_seconds + forkAfter.cpu_seconds);
  const rawRate = (rawBefore.programs + rawAfter.programs) / (rawBefore.seconds + rawAfter.seconds);
  const rawCpuRate = (rawBefore.programs + rawAfter.programs) / (rawBefore.cpu_seconds + rawAfter.cpu_seconds);
  const rawEvents = (rawBefore.events + rawAfter.events) / (rawBefore.seconds + rawAfter.seconds);
  const main = runs[0] as { programs_per_s: number; programs_per_cpu_s_worker: number; events_per_s: number; normal: number; output_match: number };
  return {
    source: path.basename(source),
    programs: programs.length,
    raw_inprocess: {
      programs_per_s: round(rawRate),
      programs_per_cpu_s: round(rawCpuRate),
      events_per_s: round(rawEvents),
      before: rawBefore,
      after: rawAfter,
    },
    naive_fork_per_program: {
      programs_per_s: round(forkRate),
      programs_per_cpu_s: round(forkCpuRate),
      before: forkBefore,
      after: forkAfter,
    },
    sandboxed: runs,
    isolation: modes[0],
    ratio_sandbox_to_raw_wall: round(main.programs_per_s / rawRate),
    ratio_sandbox_to_raw_cpu: round(main.programs_per_cpu_s_worker / rawCpuRate),
    ratio_sandbox_to_naive_fork_cpu: round(main.programs_per_cpu_s_worker / forkCpuRate),
    target_programs_per_s_per_core: 500,
    cruxeval_check: { normal: main.normal, output_match: main.output_match, of: programs.length },
    load_average: fs.existsSync('/proc/loadavg') ? fs.readFileSync('/proc/loadavg', 'utf8').trim() : 'unknown',
  };
}

import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { assetPath } from '../src/util/paths';
import { entryReturnValue, traceBatch } from '../src/trace/index';
import { probeBwrap } from '../src/trace/isolation';
import { SandboxPool } from '../src/trace/pool';
import type { ProgramRecord } from '../src/trace/types';
import type { CallRecord } from '../src/trace/index';
import { defaultProgramsConfig, generateProgram } from '../src/programs/index';
import { median } from '../src/util/stats';

/**
 * `npm run bench -- trace`: sandboxed tracing throughput against raw in-process settrace on the
 * same programs in the same run (CruxEval when $NDBG_CRUXEVAL names its JSONL file, else the
 * test fixture).
 *
 * - raw: tracer.trace_program in one Python process (no fork, no sandbox, no JSON).
 * - naive fork-per-program: fork + trace + JSON to a pipe, nothing else (the harness the issue
 *   measured at 300-370 programs/s), to show what the sandbox adds on top of a plain fork.
 * - sandboxed, 1 worker: programs/s by wall clock, and programs per CPU-second of the worker
 *   plus its forked children (= programs/s/core, robust to other load on a shared machine),
 *   and events/s; with the shared child (default) and with --fork-each (a fresh fork per
 *   program), three rounds each, interleaved, so both see the same machine; medians reported.
 * - sandboxed, 2 workers: wall-clock programs/s.
 * - check: on the sandboxed run, how many programs ended `normal` with f's return repr equal to
 *   the `output` field.
 * - shared vs fresh fork: the records of both modes compared byte for byte, on these programs
 *   and on programs from the generator (which imports, defines classes... so both paths run).
 */
type Prog = ProgramRecord & { output?: string };

function loadPrograms(): { source: string; programs: Prog[] } {
  // CruxEval is the user's file (NDBG_CRUXEVAL=path): no machine path is built in.
  const candidates = [process.env.NDBG_CRUXEVAL].filter(Boolean) as string[];
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
  const out = execFileSync('python3', ['-S', assetPath('bench/trace_inprocess.py'), String(repeat), mode], {
    input,
    env: { ...process.env, PYTHONHASHSEED: '0' },
    maxBuffer: 1 << 26,
  });
  return JSON.parse(out.toString()) as { programs: number; seconds: number; cpu_seconds: number; events: number };
}

async function sandboxed(programs: Array<Prog | CallRecord>, mode: 'bwrap' | 'guards', workers: number, sessionPrograms?: number, keep?: string[]) {
  const pool = new SandboxPool(workers, { isolation: mode, sessionPrograms });
  try {
    for await (const r of traceBatch(programs.slice(0, 20), { pool })) void r; // warm-up
    const before = await pool.stats();
    const cpu0 = before.cpuSeconds;
    const node0 = process.cpuUsage();
    const t0 = performance.now();
    let events = 0;
    let normal = 0;
    let match = 0;
    let i = 0;
    for await (const r of traceBatch(programs, { pool })) {
      const p = programs[i++] as Prog;
      keep?.push(JSON.stringify(r));
      events += r.events.length;
      if (r.status === 'normal') {
        normal++;
        if (p.output !== undefined && entryReturnValue(r) === p.output) match++;
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    const after = await pool.stats();
    const workerCpu = after.cpuSeconds - cpu0;
    const nodeUsage = process.cpuUsage(node0);
    const nodeCpu = (nodeUsage.user + nodeUsage.system) / 1e6;
    return {
      isolation: pool.mode,
      workers,
      process: sessionPrograms === 0 ? 'fork-each' : 'shared',
      ran_shared: after.shared - before.shared,
      ran_forked: after.forked - before.forked,
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

type Run = Awaited<ReturnType<typeof sandboxed>>;

function medianOf(runs: Run[], key: 'programs_per_s' | 'programs_per_cpu_s_worker'): number {
  return median(runs.map((r) => r[key]));
}

/** The first input of each of `n` generated programs (seed 1, default generator config). */
function generatedPrograms(n: number): CallRecord[] {
  const cfg = defaultProgramsConfig().generator;
  return Array.from({ length: n }, (_, i) => {
    const g = generateProgram(1, i, cfg);
    return { id: g.id, code: g.code, call: `f(${g.inputs[0]})` };
  });
}

/** Records of the shared and fork-each modes, byte for byte. */
async function compareModes(programs: Array<Prog | CallRecord>, mode: 'bwrap' | 'guards') {
  const shared: string[] = [];
  const fresh: string[] = [];
  const s = await sandboxed(programs, mode, 1, undefined, shared);
  await sandboxed(programs, mode, 1, 0, fresh);
  const differing = shared.map((r, i) => (r === fresh[i] ? '' : (JSON.parse(r) as { id: string }).id)).filter(Boolean);
  return { programs: programs.length, ran_shared: s.ran_shared, ran_forked: s.ran_forked, identical: programs.length - differing.length, differing: differing.slice(0, 20) };
}

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const { source, programs } = loadPrograms();
  const repeat = Number(args.find((a) => a.startsWith('--repeat='))?.split('=')[1] ?? 3);
  const rounds = Number(args.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 3);
  const modes: Array<'bwrap' | 'guards'> = probeBwrap().ok ? ['bwrap', 'guards'] : ['guards'];
  const rawBefore = raw(programs, repeat);
  const forkBefore = raw(programs, 1, 'fork');
  const shared: Record<string, Run[]> = {};
  const forkEach: Run[] = [];
  for (let k = 0; k < rounds; k++) {
    for (const mode of modes) (shared[mode] ??= []).push(await sandboxed(programs, mode, 1));
    forkEach.push(await sandboxed(programs, modes[0], 1, 0));
  }
  const twoWorkers = await sandboxed(programs, modes[0], 2);
  const rawAfter = raw(programs, repeat);
  const forkAfter = raw(programs, 1, 'fork');
  const forkRate = (forkBefore.programs + forkAfter.programs) / (forkBefore.seconds + forkAfter.seconds);
  const forkCpuRate = (forkBefore.programs + forkAfter.programs) / (forkBefore.cpu_seconds + forkAfter.cpu_seconds);
  const rawRate = (rawBefore.programs + rawAfter.programs) / (rawBefore.seconds + rawAfter.seconds);
  const rawCpuRate = (rawBefore.programs + rawAfter.programs) / (rawBefore.cpu_seconds + rawAfter.cpu_seconds);
  const rawEvents = (rawBefore.events + rawAfter.events) / (rawBefore.seconds + rawAfter.seconds);
  const main = shared[modes[0]];
  const mainCpu = medianOf(main, 'programs_per_cpu_s_worker');
  const summary = (runs: Run[]) => ({ programs_per_s: medianOf(runs, 'programs_per_s'), programs_per_cpu_s_worker: medianOf(runs, 'programs_per_cpu_s_worker'), runs });
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
    sandboxed: Object.fromEntries(modes.map((m) => [m, summary(shared[m])])),
    sandboxed_fork_each: summary(forkEach),
    sandboxed_two_workers: twoWorkers,
    isolation: modes[0],
    ratio_sandbox_to_raw_cpu: round(mainCpu / rawCpuRate),
    ratio_sandbox_to_naive_fork_cpu: round(mainCpu / forkCpuRate),
    ratio_sandbox_to_fork_each_cpu: round(mainCpu / medianOf(forkEach, 'programs_per_cpu_s_worker')),
    target_programs_per_s_per_core: 500,
    cruxeval_check: { normal: main[0].normal, output_match: main[0].output_match, of: programs.length },
    shared_vs_fork_each: {
      [path.basename(source)]: await compareModes(programs, modes[0]),
      generated: await compareModes(generatedPrograms(2000), modes[0]),
    },
    load_average: fs.existsSync('/proc/loadavg') ? fs.readFileSync('/proc/loadavg', 'utf8').trim() : 'unknown',
  };
}

import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BenchUsageError, flagValue, intFlag } from './flags';
import { isaFromCpuinfo, readCpuinfo } from './cpu_isa';
import { median } from '../src/util/stats';

/**
 * The eval's decoding time on a trained quickstart run: the model's next-state answers on the
 * held-out programs and on the held-out mined functions (every action, one task per program, two
 * decode workers, as stage 7 decodes them). With --against=DIR, another build's product (e.g.
 * an older commit's `dist/`) runs the same sections in turns with this tree's (A B A B …), each
 * in a fresh process, and the result gives the ratio of the medians and whether both wrote the
 * same answers, byte for byte.
 * Usage: npm run bench -- eval [--run=runs/quickstart] [--split=test] [--against=OLD/dist] [--rounds=2]
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const runDir = path.resolve(flagValue(args, 'run') ?? 'runs/quickstart');
  const split = flagValue(args, 'split') ?? 'test';
  const against = flagValue(args, 'against');
  const rounds = intFlag(args, 'rounds', against ? 2 : 1);
  const checkpoint = path.join(runDir, 'run', 'averaged');
  if (!fs.existsSync(checkpoint)) throw new BenchUsageError(`${checkpoint} does not exist: give --run=DIR, a finished \`ndbg quickstart --out DIR\``);
  const sections = [
    { name: 'held-out programs', traces: path.join(runDir, 'traces', `${split}.jsonl`) },
    { name: 'mined functions', traces: path.join(runDir, 'traces', `mined-${split}.jsonl`) },
  ].filter((s) => fs.existsSync(s.traces));
  if (sections.length === 0) throw new BenchUsageError(`no ${split} traces under ${path.join(runDir, 'traces')}`);
  // This tree's product, compiled beside the bench (bench/build/src), and the other build.
  const builds = [{ name: 'this tree', dir: path.join(__dirname, '..', 'src') }, ...(against ? [{ name: 'against', dir: path.resolve(against) }] : [])];
  for (const b of builds) if (!fs.existsSync(path.join(b.dir, 'eval', 'next_state.js'))) throw new BenchUsageError(`${b.dir} holds no compiled eval/next_state.js`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-bench-eval-'));
  try {
    const seconds = new Map<string, number[]>();
    const samples = new Map<string, string>();
    let tasks: Record<string, number> = {};
    for (let r = 0; r < rounds; r++) {
      for (const b of builds) {
        for (const s of sections) {
          const out = path.join(tmp, `${b.name}-${s.name}-${r}.jsonl`.replace(/ /g, '_'));
          process.stderr.write(`round ${r + 1}/${rounds}: ${b.name}, ${s.name} ...\n`);
          const line = runChild([path.join(__dirname, 'eval_child.js'), b.dir, checkpoint, s.traces, out]);
          const got = JSON.parse(line.trim().split('\n').pop() as string) as { seconds: number; tasks: number };
          const key = `${b.name}|${s.name}`;
          seconds.set(key, [...(seconds.get(key) ?? []), got.seconds]);
          tasks = { ...tasks, [s.name]: got.tasks };
          samples.set(key, fs.readFileSync(out, 'utf8'));
        }
      }
    }
    const bySection = sections.map((s) => {
      const row: Record<string, unknown> = { section: s.name, tasks: tasks[s.name] };
      for (const b of builds) row[`${b.name} seconds`] = seconds.get(`${b.name}|${s.name}`);
      const mine = median(seconds.get(`this tree|${s.name}`) as number[]);
      row['this tree tasks/s'] = +(tasks[s.name] / mine).toFixed(1);
      if (against) {
        row['speedup (against / this tree, medians)'] = +(median(seconds.get(`against|${s.name}`) as number[]) / mine).toFixed(2);
        row['same answers'] = samples.get(`this tree|${s.name}`) === samples.get(`against|${s.name}`);
      }
      return row;
    });
    return { machine: { cpu: os.cpus()[0]?.model, isa: isaFromCpuinfo(readCpuinfo()).label, cores: os.cpus().length }, run: runDir, split, against: against ?? null, rounds, sections: bySection };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** A child's stdout; a child that fails throws with the last lines of its stderr (TensorFlow's log lines included). */
function runChild(args: string[]): string {
  try {
    return execFileSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 }).toString();
  } catch (e) {
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '').trim().split('\n').slice(-10).join('\n');
    throw new Error(`bench eval: ${args[1]} failed on ${args[3]}:\n${stderr}`);
  }
}

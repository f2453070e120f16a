import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const root = path.join(__dirname, '..', '..');
const script = path.join(root, 'bench', 'slow-machine.sh');

/** CPU seconds a busy loop of `wallMs` gets under the script at `cpus`, or why it could not run. */
function busyLoop(cpus: string, wallMs: number): { cpuSeconds: number; wallSeconds: number } | { skip: string } {
  const loop = `const t = Date.now(); while (Date.now() - t < ${wallMs}) {} const u = process.cpuUsage(); console.log((u.user + u.system) / 1e6)`;
  const started = process.hrtime.bigint();
  const r = spawnSync('bash', [script, '--cpus', cpus, '--', process.execPath, '-e', loop], { encoding: 'utf8' });
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  if (r.status === 2 && /cannot make a CPU-limited cgroup|no cgroup cpu controller/.test(r.stderr)) return { skip: r.stderr.trim() };
  expect(r.status).toBe(0);
  return { cpuSeconds: Number(r.stdout.trim()), wallSeconds };
}

describe('bench/slow-machine.sh', () => {
  it('holds a busy command to the CPU share it is given', () => {
    const run = busyLoop('0.25', 2000);
    if ('skip' in run) {
      process.stderr.write(`skipped: ${run.skip}\n`);
      return;
    }
    // Unthrottled, the loop would use a whole CPU for its 2 s; the quota gives it about a quarter.
    expect(run.cpuSeconds).toBeLessThan(0.25 * run.wallSeconds + 0.2);
    expect(run.cpuSeconds).toBeGreaterThan(0.1);
  });

  it('shows in the machine description that ndbg prints beside its figures', () => {
    const describe = `console.log(JSON.stringify(require(${JSON.stringify(path.join(root, 'dist', 'util', 'machine'))}).describeMachine()))`;
    const r = spawnSync('bash', [script, '--cpus', '0.5', '--', process.execPath, '-e', describe], { encoding: 'utf8' });
    if (r.status === 2) {
      process.stderr.write(`skipped: ${r.stderr.trim()}\n`);
      return;
    }
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).cpuQuota).toBe(0.5);
  });

  it('passes on the command’s exit status, and removes its cgroup once a process it left has exited', () => {
    const r = spawnSync('bash', [script, '--cpus', '1', '--', 'bash', '-c', '(sleep 0.5 &); exit 7'], { encoding: 'utf8' });
    if (r.status === 2) {
      process.stderr.write(`skipped: ${r.stderr.trim()}\n`);
      return;
    }
    expect(r.status).toBe(7);
    expect(r.stderr).not.toContain('left /sys/fs/cgroup');
    for (const dir of ['/sys/fs/cgroup', '/sys/fs/cgroup/cpu']) expect(fs.existsSync(`${dir}/ndbg-slow-${r.pid}`)).toBe(false);
  });

  it('refuses a CPU share that is not a positive number, before running anything', () => {
    const r = spawnSync('bash', [script, '--cpus', 'half', '--', 'touch', '/nonexistent-dir/ran'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--cpus must be a number ≥ 0.01 (got 'half')");
  });
});

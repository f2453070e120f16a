import { spawn } from 'child_process';
import * as fs from 'fs';

export interface Stopped {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `ndbg ARGS` (node and its arguments) and sends `signal` once the run's metrics.jsonl
 * holds more than `steps` lines; resolves when the process exits. Past `giveUpMs` the signal was
 * not heard (or training never started) and the process is killed, so a test fails rather than
 * hangs.
 */
export function stopAfterSteps(args: string[], o: { cwd: string; metrics: string; steps: number; signal: NodeJS.Signals; giveUpMs: number }): Promise<Stopped> {
  const child = spawn(process.execPath, args, { cwd: o.cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => (stdout += b));
  child.stderr.on('data', (b) => (stderr += b));
  const poll = setInterval(() => {
    if (fs.existsSync(o.metrics) && fs.readFileSync(o.metrics, 'utf8').split('\n').length > o.steps) {
      clearInterval(poll);
      child.kill(o.signal);
    }
  }, 50);
  const giveUp = setTimeout(() => child.kill('SIGKILL'), o.giveUpMs);
  return new Promise((resolve) => {
    child.on('close', (code) => {
      clearInterval(poll);
      clearTimeout(giveUp);
      resolve({ code, stdout, stderr });
    });
  });
}

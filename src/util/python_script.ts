import { spawn } from 'child_process';
import * as path from 'path';

/**
 * Runs one of the package's Python scripts with `input` on stdin and resolves to its stdout.
 * A non-zero exit rejects with the tail of its stderr (these scripts only parse; a failure is
 * a bug or a broken Python, not user input).
 */
export function runPythonScript(python: string, script: string, input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [script], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${path.basename(script)} exited with ${code}: ${Buffer.concat(err).toString('utf8').slice(-2000)}`));
      else resolve(Buffer.concat(out).toString('utf8'));
    });
    child.stdin.on('error', () => undefined); // reported through 'close'
    child.stdin.end(input);
  });
}

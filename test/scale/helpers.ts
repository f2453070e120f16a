import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

export const ROOT = path.resolve(__dirname, '..', '..');
const CLI = path.join(ROOT, 'bin', 'ndbg.js');

/** Runs the real CLI (dist/, built by test/global-setup.ts); throws with its stderr when it fails. */
export function ndbg(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): string {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd ?? ROOT, env: { ...process.env, ...opts.env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ndbg ${args.join(' ')} exited ${r.status}:\n${r.stderr}`);
  return r.stdout;
}

/**
 * Small CruxEval-style programs (loops, branches, a helper call, strings, lists), `count` of
 * them from four shapes with varied constants and inputs: NDL documents of a few hundred
 * tokens, so tracing, sampling and packing take seconds.
 */
export function writePrograms(file: string, count: number, first = 0): void {
  const shapes: Array<[string, (i: number) => string]> = [
    ['def f(n):\n    s = 0\n    for k in range(n):\n        s += k * {a}\n    return s\n', (i) => String((i % 4) + 1)],
    ['def f(xs):\n    out = []\n    for x in xs:\n        if x > {a}:\n            out.append(x)\n    return out\n', (i) => `[${i % 5}, 3, ${i % 7}]`],
    ["def f(s):\n    n = 0\n    for c in s:\n        if c == 'a':\n            n += {a}\n    return n\n", (i) => `'${'ab'.repeat((i % 3) + 1)}'`],
    ['def g(x):\n    return x + {a}\n\ndef f(x):\n    y = g(x)\n    return y * 2\n', (i) => String(i)],
  ];
  const lines: string[] = [];
  for (let i = first; i < first + count; i++) {
    const [code, input] = shapes[i % shapes.length];
    lines.push(JSON.stringify({ id: `p${i}`, code: code.replace('{a}', String((i % 3) + 1)), input: input(i) }));
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines.join('\n') + '\n');
}

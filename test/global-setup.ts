import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/**
 * Tests that spawn the real CLI (`node bin/ndbg.js ...`, e.g. the trainer's kill-and-resume
 * tests) need compiled JavaScript in dist/. This builds it once per `jest` run, and only when a
 * file under src/ is newer than the last build (dist/.build-stamp), so runs that change nothing
 * cost one directory walk. tsc emits even when a colleague's file has a type error; the spawning
 * tests then fail on their own if their code is missing.
 */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(p));
    else newest = Math.max(newest, fs.statSync(p).mtimeMs);
  }
  return newest;
}

export default function globalSetup(): void {
  const root = path.resolve(__dirname, '..');
  const stamp = path.join(root, 'dist', '.build-stamp');
  const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
  if (built > newestMtime(path.join(root, 'src'))) return;
  const started = Date.now();
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', root], { cwd: root, stdio: 'pipe' });
  } catch (e) {
    const out = String((e as { stdout?: Buffer }).stdout ?? '');
    process.stderr.write(`\n[global-setup] tsc reported errors (dist/ still emitted):\n${out.split('\n').slice(0, 10).join('\n')}\n`);
  }
  fs.mkdirSync(path.dirname(stamp), { recursive: true });
  fs.writeFileSync(stamp, new Date(started).toISOString() + '\n');
  fs.utimesSync(stamp, new Date(started), new Date(started));
}

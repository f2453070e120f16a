import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

/**
 * Tests that spawn the real CLI (`node bin/ndbg.js ...`, e.g. the trainer's kill-and-resume
 * tests) or pack the library need compiled JavaScript and declarations in dist/. This builds it
 * once per `jest` run, and only when a file under src/ (or tsconfig.json) is newer than the last
 * build (dist/.build-stamp), so runs that change nothing cost one directory walk.
 *
 * A type error stops the run here, with tsc's messages: the spawning tests would otherwise run
 * a dist/ that does not match the sources and fail (or pass) far from the cause.
 */
function newestMtime(p: string): number {
  const st = fs.statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = 0;
  for (const entry of fs.readdirSync(p)) newest = Math.max(newest, newestMtime(path.join(p, entry)));
  return newest;
}

export default function globalSetup(): void {
  const root = path.resolve(__dirname, '..');
  const stamp = path.join(root, 'dist', '.build-stamp');
  const built = fs.existsSync(stamp) ? fs.statSync(stamp).mtimeMs : 0;
  const inputs = Math.max(newestMtime(path.join(root, 'src')), newestMtime(path.join(root, 'tsconfig.json')));
  if (built > inputs) return;
  const started = Date.now();
  fs.rmSync(stamp, { force: true });
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', root], { cwd: root, stdio: 'pipe' });
  } catch (e) {
    const out = String((e as { stdout?: Buffer }).stdout ?? '') || String(e);
    throw new Error(`[global-setup] tsc failed; fix the type errors first (npm run typecheck):\n${out.split('\n').slice(0, 20).join('\n')}`);
  }
  fs.mkdirSync(path.dirname(stamp), { recursive: true });
  fs.writeFileSync(stamp, new Date(started).toISOString() + '\n');
  fs.utimesSync(stamp, new Date(started), new Date(started));
}

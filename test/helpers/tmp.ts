import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

const made: string[] = [];
// Registered once per test file (each file gets its own module registry), so every directory a
// test file made is removed when the file is done, whether its tests passed or not.
afterAll(() => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A fresh directory under the OS temp dir, removed after the test file. */
export function tempDir(tag: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ndbg-${tag}-`));
  made.push(dir);
  return dir;
}

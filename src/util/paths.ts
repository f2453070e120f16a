import * as fs from 'fs';
import * as path from 'path';

let cachedRoot: string | undefined;

/**
 * The ndbg package root (the folder holding package.json). Python helpers and bundled
 * assets are read from here so the same code works from `src/` (ts-jest) and `dist/`.
 */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = __dirname;
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (fs.existsSync(candidate)) {
      const pkg = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string };
      if (pkg.name === 'ndbg') return (cachedRoot = dir);
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`ndbg package root not found above ${__dirname}`);
    dir = parent;
  }
}

/** Path of a file inside the package, e.g. `assetPath('src/trace/tracer.py')`. */
export function assetPath(relative: string): string {
  return path.join(packageRoot(), relative);
}

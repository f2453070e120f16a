import * as fs from 'fs';
import * as path from 'path';

/** Relative paths of all .py files under dir, sorted (byte order) so builds are reproducible. */
export function listPythonFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    const entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile() && e.name.endsWith('.py')) out.push(r);
    }
  };
  walk('');
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

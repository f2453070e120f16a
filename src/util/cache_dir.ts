import * as os from 'os';
import * as path from 'path';

/** ndbg's download and build cache: $NDBG_CACHE, else $XDG_CACHE_HOME/ndbg, else ~/.cache/ndbg. */
export function cacheRoot(): string {
  if (process.env.NDBG_CACHE) return path.resolve(process.env.NDBG_CACHE);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'ndbg');
}

/** The fixture repository (test/fixtures/repo/shop) traced once per test file, in the sandbox. */
import * as path from 'path';
import { SandboxPool } from '../../src/trace/pool';
import { discoverEntries, repoSpec, RepoTraceRecord, traceRepoEntries } from '../../src/trace/repo';

export const SHOP = path.join(__dirname, '..', 'fixtures', 'repo', 'shop');

let cached: Promise<RepoTraceRecord[]> | undefined;

/** Every discovered entry point of the fixture (unittest tests, doctests of inventory.pricing). */
export function traceShop(): Promise<RepoTraceRecord[]> {
  cached ??= (async () => {
    const pool = new SandboxPool(1, { isolation: 'guards' });
    try {
      const spec = repoSpec(SHOP, { doctest: ['inventory.pricing'] });
      const { entries } = await discoverEntries(pool, spec);
      const out: RepoTraceRecord[] = [];
      for await (const r of traceRepoEntries(pool, spec, 'shop', entries)) out.push(r);
      return out;
    } finally {
      await pool.close();
    }
  })();
  return cached;
}

/**
 * Loads a package that ships only as an ES module (hyparquet, hyparquet-compressors) from
 * ndbg's CommonJS build. Node ≥ 20.19 `require`s such a module natively; the host's own
 * `require` is used (through process.getBuiltinModule), not the caller's, because test runners
 * that replace `require` with a CommonJS-only loader of their own (jest) cannot load it. Older
 * Node 20 releases fall back to a real `import()`, which TypeScript would otherwise rewrite
 * into `require`.
 */
import type * as NodeModule from 'module';

const loaded = new Map<string, Promise<unknown>>();

function hostRequire(): NodeJS.Require {
  const builtin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  const mod = (builtin ? builtin('module') : require('module')) as typeof NodeModule;
  return mod.createRequire(__filename);
}

const nativeImport = new Function('specifier', 'return import(specifier)') as (specifier: string) => Promise<unknown>;

async function load(specifier: string): Promise<unknown> {
  try {
    return hostRequire()(specifier);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ERR_REQUIRE_ESM') throw e;
    return nativeImport(specifier);
  }
}

export function importEsm<T>(specifier: string): Promise<T> {
  let p = loaded.get(specifier);
  if (!p) {
    p = load(specifier);
    loaded.set(specifier, p);
  }
  return p as Promise<T>;
}

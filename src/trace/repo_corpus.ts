/**
 * Which repositories a corpus traces (docs/trace.md, "Corpora and the manifest"): a repository
 * directory, a standard-library module, or an installed package, each resolved to a RepoSpec
 * with the entry points to trace and what the manifest records about it (package, version).
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { z } from 'zod';
import { readJsonFile, validateConfig } from '../util/config';
import { UserError } from '../util/errors';
import { pythonVersion } from './pool';
import { RepoSpec, repoSpec } from './repo';

export interface RepoTarget {
  id: string;
  spec: RepoSpec;
  package: string;
  version: string | null;
  /** Entry points to trace (none: the discovered ones). */
  entries: string[];
}

/** A --corpus file: `{"repos": [...]}`, one object per repository. */
const corpusSchema = z
  .object({
    repos: z
      .array(
        z
          .object({
            /** A standard-library module, traced as its own repository. */
            stdlib: z.string().optional(),
            /** An installed package (importable by the tracing Python), traced as its own repository. */
            package: z.string().optional(),
            /** A repository directory, relative to the corpus file. */
            repo: z.string().optional(),
            id: z.string().optional(),
            /** Entry points; when given, only these (plus the doctests when `doctest` says so). */
            entries: z.array(z.string()).optional(),
            /** Modules whose doctests are entry points; for stdlib/package `true` is the module
             * itself (the default unless `entries` is given). */
            doctest: z.union([z.boolean(), z.array(z.string())]).optional(),
            version: z.string().optional(),
          })
          .strict()
          .refine((r) => [r.stdlib, r.package, r.repo].filter((x) => x !== undefined).length === 1, {
            message: 'give exactly one of stdlib, package and repo',
          }),
      )
      .min(1),
  })
  .strict();

export function corpusTargets(file: string, python: string): RepoTarget[] {
  const rows = validateConfig(corpusSchema, readJsonFile(file), file).repos;
  return rows.map((r, k) => {
    try {
      const name = r.stdlib ?? r.package;
      if (name !== undefined) {
        const [t] = moduleTargets([name], python, r.package !== undefined);
        const doctest = Array.isArray(r.doctest) ? r.doctest : r.doctest === true || (r.doctest === undefined && r.entries === undefined) ? [name] : [];
        return { ...t, id: r.id ?? t.id, version: r.version ?? t.version, entries: r.entries ?? [], spec: { ...t.spec, doctest } };
      }
      const spec = repoSpec(path.resolve(path.dirname(file), r.repo as string), { doctest: Array.isArray(r.doctest) ? r.doctest : [] });
      return { id: r.id ?? path.basename(spec.root), spec, package: path.basename(spec.root), version: r.version ?? null, entries: r.entries ?? [] };
    } catch (e) {
      throw new UserError(`--corpus ${file}: entry ${k}: ${(e as Error).message}`);
    }
  });
}

const LOOKUP = `import importlib.util, importlib.metadata as md, json, sys
dists = md.packages_distributions()
out = {}
for m in sys.argv[1:]:
    s = importlib.util.find_spec(m)
    origin = s.origin if s and s.origin and s.origin.endswith(".py") else None
    top = m.split(".")[0]
    version = None
    for d in dists.get(top, []):
        try:
            version = md.version(d)
            break
        except Exception:
            pass
    out[m] = [origin, version]
print(json.dumps(out))`;

/**
 * The file or package directory of modules, each traced as its own repository: standard-library
 * modules (`installed` false: on sys.path already, version = the Python's) or installed packages
 * (their site directory goes on the path, since the sandbox runs Python without `site`; version
 * from the distribution's metadata).
 */
export function moduleTargets(modules: string[], python: string, installed = false): RepoTarget[] {
  const flag = installed ? '--package' : '--stdlib';
  const r = spawnSync(python, ['-c', LOOKUP, ...modules], { encoding: 'utf8', env: process.env });
  if (r.status !== 0) throw new UserError(`${flag}: ${python} could not look the modules up: ${r.stderr.trim().split('\n').pop()}`);
  const found = JSON.parse(r.stdout) as Record<string, [string | null, string | null]>;
  return modules.map((m) => {
    const [origin, version] = found[m];
    if (!origin) throw new UserError(`${flag} ${m}: not a pure-Python module of ${python}`);
    const root = origin.endsWith('__init__.py') ? path.dirname(origin) : origin;
    // The package's own top-level directory's parent: `import pkg.sub` must resolve from there.
    const site = path.resolve(path.dirname(origin), ...Array(m.split('.').length - (origin.endsWith('__init__.py') ? 0 : 1)).fill('..'));
    const spec = { ...repoSpec(root, { path: installed ? [site] : [] }), unittest: false, doctest: [m] };
    return installed
      ? { id: `package/${m}`, spec, package: m, version, entries: [] }
      : { id: `stdlib/${m}`, spec, package: m, version: pythonVersion(python), entries: [] };
  });
}

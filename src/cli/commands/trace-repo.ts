import { spawnSync } from 'child_process';
import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { z } from 'zod';
import { SandboxPool, pythonVersion } from '../../trace/pool';
import type { IsolationChoice } from '../../trace/isolation';
import {
  discoverEntries,
  manifestEntry,
  RepoManifestEntry,
  RepoSpec,
  repoSpec,
  repoReadPaths,
  RepoTraceRecord,
  traceRepoEntries,
} from '../../trace/repo';
import { readJsonFile, validateConfig } from '../../util/config';
import { UserError } from '../../util/errors';
import { replaceFileAtomic } from '../../util/fsync';
import { AtomicJsonlWriter } from '../../util/jsonl';
import { Rng } from '../../util/rng';

const HELP = `Trace a repository's own entry points in the sandbox (docs/trace.md, "Repository traces").

  ndbg trace-repo --repo test/fixtures/repo/shop --doctest inventory.pricing --out shop.jsonl
  ndbg trace-repo --repo DIR --entry 'call:pkg.mod:f(3)' --entry 'unittest:tests.test_x' --out t.jsonl
  ndbg trace-repo --stdlib fractions,textwrap,colorsys --max-entries 20 --out stdlib.jsonl

Entry points: unittest tests (files test*.py under the root, found by default), the doctests of
--doctest modules, or --entry call:MODULE:EXPR / unittest:ID / doctest:NAME / pytest:NODE.
Only frames of files under the root are recorded. The repository is read-only to the run; its
working directory is the sandbox's scratch dir. --out gets one record per entry point and
OUT.manifest.json what was traced (package, version, commit, file hashes, Python version).`;

interface Target {
  id: string;
  spec: RepoSpec;
  package: string;
  version: string | null;
  /** Entry points to trace (none: the discovered ones). */
  entries: string[];
}

/** A --corpus file: the repositories of a corpus, one object each (docs/trace.md, "Corpora"). */
const corpusSchema = z.object({ repos: z.array(
  z
    .object({
      /** A standard-library module, traced as its own repository. */
      stdlib: z.string().optional(),
      /** Or a repository directory, relative to the corpus file. */
      repo: z.string().optional(),
      id: z.string().optional(),
      /** Entry points; when given, only these (plus the doctests when `doctest` is true). */
      entries: z.array(z.string()).optional(),
      /** A stdlib module: whether its doctests are entry points too (default: unless `entries`); a repo: its doctest modules. */
      doctest: z.union([z.boolean(), z.array(z.string())]).optional(),
      version: z.string().optional(),
    })
    .strict()
    .refine((r) => (r.stdlib === undefined) !== (r.repo === undefined), { message: 'give exactly one of stdlib and repo' }),
).min(1) }).strict();

function corpusTargets(file: string, python: string): Target[] {
  const rows = validateConfig(corpusSchema, readJsonFile(file), file).repos;
  return rows.flatMap((r, k) => {
    try {
      if (r.stdlib !== undefined) {
        const [t] = stdlibTargets([r.stdlib], python);
        const withDoctests = r.doctest === true || (r.doctest === undefined && r.entries === undefined);
        return [{ ...t, id: r.id ?? t.id, entries: r.entries ?? [], spec: { ...t.spec, doctest: withDoctests ? [r.stdlib] : [] } }];
      }
      const spec = repoSpec(path.resolve(path.dirname(file), r.repo as string), { doctest: Array.isArray(r.doctest) ? r.doctest : [] });
      return [{ id: r.id ?? path.basename(spec.root), spec, package: path.basename(spec.root), version: r.version ?? null, entries: r.entries ?? [] }];
    } catch (e) {
      throw new UserError(`--corpus ${file}: entry ${k}: ${(e as Error).message}`);
    }
  });
}

/** The file or package directory of standard-library modules, each traced as its own repository. */
function stdlibTargets(modules: string[], python: string): Target[] {
  const script = 'import importlib.util, json, sys\nout = {}\nfor m in sys.argv[1:]:\n    s = importlib.util.find_spec(m)\n    out[m] = s.origin if s and s.origin and s.origin.endswith(".py") else None\nprint(json.dumps(out))';
  const r = spawnSync(python, ['-c', script, ...modules], { encoding: 'utf8' });
  if (r.status !== 0) throw new UserError(`--stdlib: ${python} could not look the modules up: ${r.stderr.trim().split('\n').pop()}`);
  const origins = JSON.parse(r.stdout) as Record<string, string | null>;
  const version = pythonVersion(python);
  return modules.map((m) => {
    const origin = origins[m];
    if (!origin) throw new UserError(`--stdlib ${m}: not a pure-Python module of ${python}`);
    const root = origin.endsWith('__init__.py') ? path.dirname(origin) : origin;
    // The standard library is on sys.path already: no entries of its own.
    return { id: `stdlib/${m}`, spec: { ...repoSpec(root, { path: [] }), unittest: false, doctest: [m] }, package: m, version, entries: [] };
  });
}

function list(v: unknown): string[] {
  const items = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return items.flatMap((s) => String(s).split(',')).map((s) => s.trim()).filter((s) => s !== '');
}

export const traceRepoCommand: CommandModule = {
  command: 'trace-repo',
  describe: "Trace a repository's tests, doctests or calls in the sandbox (repository-level traces)",
  builder: (y: Argv) =>
    y
      .usage(HELP)
      .option('repo', { type: 'string', describe: 'Repository directory (or one .py file)' })
      .option('id', { type: 'string', describe: "The repository's id in records and the manifest (default: its directory name)" })
      .option('stdlib', { type: 'string', describe: 'Comma-separated standard-library modules, each traced as a repository through its doctests' })
      .option('corpus', { type: 'string', describe: 'JSON {repos: [{stdlib|repo, id?, entries?, doctest?, version?}]}, e.g. examples/repo-corpus/stdlib.json' })
      .option('entry', { type: 'string', array: true, describe: 'Entry point(s); default: the discovered tests and doctests' })
      .option('doctest', { type: 'string', describe: 'Comma-separated modules of --repo whose doctests are entry points' })
      .option('unittest', { type: 'boolean', default: true, describe: 'Discover unittest tests (test*.py) under --repo' })
      .option('path', { type: 'string', describe: 'Comma-separated sys.path dirs relative to --repo (default: the repo itself)' })
      .option('max-entries', { type: 'number', describe: 'At most this many entry points per repository (a seeded sample, in their order)' })
      .option('seed', { type: 'number', default: 0 })
      .option('out', { type: 'string', demandOption: true, describe: 'Output JSONL of repository trace records' })
      .option('manifest', { type: 'string', describe: 'Corpus manifest JSON (default OUT.manifest.json)' })
      .option('workers', { type: 'number', default: 1 })
      .option('timeout', { type: 'number', default: 10, describe: 'Wall-clock seconds per entry point' })
      .option('max-events', { type: 'number', default: 20000, describe: 'Event cap per entry point (status never beyond it)' })
      .option('python', { type: 'string', default: 'python3' })
      .option('isolation', { type: 'string', choices: ['auto', 'bwrap', 'guards'] })
      .option('quiet', { type: 'boolean', default: false })
      .check((a) => {
        if (!a.repo && !a.stdlib && !a.corpus) throw new UserError('give --repo DIR, --stdlib MODULES or --corpus FILE');
        if (!Number.isInteger(a.workers) || (a.workers as number) < 1) throw new UserError(`--workers must be a positive integer, got ${a.workers}`);
        if (a['max-entries'] !== undefined && !((a['max-entries'] as number) >= 1)) throw new UserError('--max-entries must be at least 1');
        return true;
      }),
  handler: async (a) => {
    const python = a.python as string;
    const targets: Target[] = [];
    if (a.repo) {
      const spec = repoSpec(a.repo as string, {
        path: a.path ? list(a.path) : undefined,
        unittest: a.unittest as boolean,
        doctest: list(a.doctest),
      });
      targets.push({ id: (a.id as string | undefined) ?? path.basename(spec.root).replace(/\.py$/, ''), spec, package: path.basename(spec.root), version: null, entries: list(a.entry) });
    }
    if (a.stdlib) targets.push(...stdlibTargets(list(a.stdlib), python).map((t) => ({ ...t, entries: list(a.entry) })));
    if (a.corpus) targets.push(...corpusTargets(a.corpus as string, python));
    const pool = new SandboxPool(a.workers as number, {
      python,
      isolation: a.isolation as IsolationChoice | undefined,
      timeoutS: a.timeout as number,
      maxEvents: a['max-events'] as number,
      readOnlyPaths: repoReadPaths(targets.map((t) => t.spec)),
    });
    const out = new AtomicJsonlWriter(a.out as string);
    const manifest: RepoManifestEntry[] = [];
    try {
      for (const t of targets) {
        let entries = t.entries;
        if (entries.length === 0 || t.spec.doctest.length > 0) {
          const found = await discoverEntries(pool, t.spec);
          for (const e of found.errors) process.stderr.write(`${t.id}: ${e}\n`);
          entries = [...entries, ...found.entries];
        }
        entries = sampleEntries(entries, a['max-entries'] as number | undefined, a.seed as number, t.id);
        const records: RepoTraceRecord[] = [];
        for await (const r of traceRepoEntries(pool, t.spec, t.id, entries)) {
          out.write(r);
          // Only what the manifest counts is kept: the events are already on disk.
          records.push({ ...r, events: [], files: {}, blocks: {} });
        }
        manifest.push(manifestEntry(t.id, t.spec, records, { package: t.package, version: t.version }));
        if (!a.quiet) process.stderr.write(`${t.id}: ${records.length} entry points, ${JSON.stringify(manifest[manifest.length - 1].statuses)}\n`);
      }
      out.commit();
    } catch (e) {
      out.abort();
      throw e;
    } finally {
      await pool.close();
    }
    const file = (a.manifest as string | undefined) ?? `${a.out as string}.manifest.json`;
    replaceFileAtomic(file, JSON.stringify({ kind: 'repo-corpus', python: pythonVersion(python), isolation: pool.mode, repos: manifest }, null, 1) + '\n');
    process.stderr.write(`wrote ${a.out as string} and ${file} (isolation ${pool.mode})\n`);
  },
};

/** At most `max` entries: a seeded choice, kept in their original order (deterministic). */
export function sampleEntries(entries: string[], max: number | undefined, seed: number, repoId: string): string[] {
  if (max === undefined || entries.length <= max) return entries;
  const idx = Rng.from(seed, repoId, 'repo-entries').shuffle(entries.map((_, i) => i));
  return idx.slice(0, max).sort((x, y) => x - y).map((i) => entries[i]);
}

import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { SandboxPool, pythonVersion } from '../../trace/pool';
import type { IsolationChoice } from '../../trace/isolation';
import {
  discoverEntries,
  manifestEntry,
  RepoManifestEntry,
  repoSpec,
  repoReadPaths,
  RepoTraceRecord,
  traceRepoEntries,
} from '../../trace/repo';
import { UserError } from '../../util/errors';
import { corpusTargets, moduleTargets, RepoTarget } from '../../trace/repo_corpus';
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
      .option('package', { type: 'string', describe: 'Comma-separated installed pure-Python packages (importable by --python), each traced as a repository through its doctests' })
      .option('corpus', { type: 'string', describe: 'JSON {repos: [{stdlib|package|repo, id?, entries?, doctest?, version?}]}, e.g. examples/repo-corpus/stdlib.json' })
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
        if (!a.repo && !a.stdlib && !a.package && !a.corpus) throw new UserError('give --repo DIR, --stdlib MODULES, --package PACKAGES or --corpus FILE');
        if (!Number.isInteger(a.workers) || (a.workers as number) < 1) throw new UserError(`--workers must be a positive integer, got ${a.workers}`);
        if (a['max-entries'] !== undefined && !((a['max-entries'] as number) >= 1)) throw new UserError('--max-entries must be at least 1');
        return true;
      }),
  handler: async (a) => {
    // A path to an interpreter must stay valid inside bubblewrap, which starts in /tmp.
    const python = (a.python as string).includes('/') ? path.resolve(a.python as string) : (a.python as string);
    const targets: RepoTarget[] = [];
    if (a.repo) {
      const spec = repoSpec(a.repo as string, {
        path: a.path ? list(a.path) : undefined,
        unittest: a.unittest as boolean,
        doctest: list(a.doctest),
      });
      targets.push({ id: (a.id as string | undefined) ?? path.basename(spec.root).replace(/\.py$/, ''), spec, package: path.basename(spec.root), version: null, entries: list(a.entry) });
    }
    if (a.stdlib) targets.push(...moduleTargets(list(a.stdlib), python).map((t) => ({ ...t, entries: list(a.entry) })));
    if (a.package) targets.push(...moduleTargets(list(a.package), python, true).map((t) => ({ ...t, entries: list(a.entry) })));
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

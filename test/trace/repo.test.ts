import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { probeBwrap } from '../../src/trace/isolation';
import { SandboxPool } from '../../src/trace/pool';
import { discoverEntries, hashPythonFiles, manifestEntry, repoReadPaths, repoSpec, RepoTraceRecord, traceRepoEntries } from '../../src/trace/repo';
import { UserError } from '../../src/util/errors';
import { moduleTargets } from '../../src/trace/repo_corpus';

/**
 * Repository-level tracing (docs/trace.md, "Repository traces") on the fixture repository
 * test/fixtures/repo/shop: three modules of a package, classes, an exception raised in one
 * module and caught in another, a recursive helper, unittest tests and doctests. Runs under the
 * guards-only sandbox always and under bubblewrap too where it works here.
 */
export const SHOP = path.join(__dirname, '..', 'fixtures', 'repo', 'shop');

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function traceAll(pool: SandboxPool, root: string, entries: string[], limits = {}): Promise<RepoTraceRecord[]> {
  const out: RepoTraceRecord[] = [];
  for await (const r of traceRepoEntries(pool, repoSpec(root, { doctest: ['inventory.pricing'] }), 'shop', entries, limits)) out.push(r);
  return out;
}

const modes: Array<'guards' | 'bwrap'> = ['guards', ...(probeBwrap().ok ? (['bwrap'] as const) : [])];

describe.each(modes)('the fixture repository, isolation %s', (mode) => {
  let pool: SandboxPool;
  let entries: string[];
  let records: RepoTraceRecord[];
  beforeAll(async () => {
    const spec = repoSpec(SHOP, { doctest: ['inventory.pricing'] });
    // bwrap puts a private tmpfs on /tmp: a checkout under /tmp (a CI clone) must be bound in.
    pool = new SandboxPool(1, { isolation: mode, readOnlyPaths: repoReadPaths([spec]) });
    entries = (await discoverEntries(pool, spec)).entries;
    records = await traceAll(pool, SHOP, entries);
  });
  afterAll(() => pool.close());

  it('discovers the unittest tests and the doctests', () => {
    expect(entries.filter((e) => e.startsWith('unittest:'))).toHaveLength(7);
    expect(entries).toContain('unittest:tests.test_models.InventoryTest.test_out_of_stock');
    expect(entries.filter((e) => e.startsWith('doctest:'))).toEqual(['doctest:inventory.pricing', 'doctest:inventory.pricing.discount', 'doctest:inventory.pricing.nested_total']);
  });

  it('runs every entry point to its passing end, in the requested isolation', () => {
    for (const r of records) {
      expect([r.entry, r.status, r.isolation]).toEqual([r.entry, 'normal', mode]);
      expect(r.outcome).toMatch(/^passed (1 of 1|\d+ of \d+ examples)$/);
      expect(r.bounds).toEqual({ max_events: 10000, repr_cap: 256, timeout_s: 5 });
    }
  });

  it('records only frames of the repository, with their files and source lines', () => {
    for (const r of records) {
      const files = Object.keys(r.files);
      expect(files.every((f) => /^(inventory|tests)\/\w+\.py$/.test(f))).toBe(true);
      for (const e of r.events) {
        expect(['<module>', 'InventoryTest', 'ReportTest']).not.toContain(e.func);
        if (e.event === 'call') expect(files).toContain(e.file);
      }
      // Every event's src is its file's line.
      const fileOf = new Map(r.events.filter((e) => e.event === 'call').map((e) => [e.invocation, e.file as string]));
      for (const e of r.events) expect(e.src).toBe(r.files[fileOf.get(e.invocation) as string].split('\n')[e.line - 1]);
      expect(Object.keys(r.blocks).sort()).toEqual(files.sort());
    }
  });

  it('records an exception that crosses a call between modules', () => {
    const r = records.find((x) => x.entry.endsWith('test_out_of_stock')) as RepoTraceRecord;
    const raised = r.events.filter((e) => e.event === 'exception');
    expect(raised.map((e) => e.func)).toEqual(['remove', 'test_out_of_stock']);
    expect(raised[0].value).toBe("OutOfStock('pear: wanted 4, 1 left')");
    const remove = r.events.filter((e) => e.func === 'remove');
    expect(remove[remove.length - 1]).toMatchObject({ event: 'return', value: null });
    expect(r.events.some((e) => e.event === 'call' && e.func === '__init__' && e.file === 'inventory/errors.py')).toBe(true);
  });

  it('records the recursive helper one level deeper per call', () => {
    const r = records.find((x) => x.entry.endsWith('test_nested')) as RepoTraceRecord;
    const calls = r.events.filter((e) => e.event === 'call' && e.func === 'nested_total').map((e) => e.depth);
    expect(calls).toEqual([1, 2, 2, 3]);
  });

  it('bounds an entry point by events and says which bound ended it', async () => {
    const [r] = await traceAll(pool, SHOP, ['unittest:tests.test_report.ReportTest.test_summary'], { maxEvents: 30 });
    expect([r.status, r.limit, r.events.length, r.bounds.max_events]).toEqual(['never', 'steps', 30, 30]);
    expect(Object.keys(r.blocks).length).toBeGreaterThan(0);
    // Even a call event the cut came at says its file (it is written before the cap is checked).
    expect(r.events.filter((e) => e.event === 'call').every((e) => typeof e.file === 'string')).toBe(true);
  });

  it('runs a pytest node when pytest is importable from the given path, else says it is not', async () => {
    const site = spawnSync('python3', ['-c', 'import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))'], { encoding: 'utf8' });
    const spec = repoSpec(SHOP, { path: site.status === 0 ? ['.', site.stdout.trim()] : ['.'] });
    const [r] = await collect(traceRepoEntries(pool, spec, 'shop', ['pytest:tests/test_report.py::ReportTest::test_nested'], { timeoutS: 60 }));
    if (site.status !== 0) {
      expect(r.error).toMatch(/pytest is not importable/);
      return;
    }
    expect([r.status, r.outcome]).toEqual(['normal', 'pytest exit code 0']);
    // pytest imports the test module while tracing: no module or class body is recorded.
    const calls = r.events.filter((e) => e.event === 'call');
    expect(calls.map((e) => e.func)).toEqual(['test_nested', 'nested_total', 'nested_total', 'nested_total', 'nested_total']);
  });

  it('reports a bad entry point as an error record without events', async () => {
    const rs = await traceAll(pool, SHOP, ['call:inventory.nothere:f()', 'unittest:tests.test_models.Nope', 'frobnicate:x']);
    for (const r of rs) expect([r.status, r.events.length, r.error]).toEqual(['error', 0, expect.stringMatching(/^EntryError: /)]);
  });
});

/** A repository whose code attacks the machine: every attack is refused and labelled. */
describe.each(modes)('a hostile repository, isolation %s', (mode) => {
  const victim = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-repo-victim-'));
  fs.writeFileSync(path.join(victim, 'keep.txt'), 'precious\n');
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-hostile-repo-'));
  const V = JSON.stringify(victim);
  fs.writeFileSync(
    path.join(repo, 'evil.py'),
    [
      'import os, shutil, socket, subprocess',
      `def write_outside():\n    open(${V} + "/new.txt", "w").write("x")`,
      'def write_repo():\n    open(os.path.join(os.path.dirname(__file__), "planted.py"), "w").write("x = 1")',
      `def remove_outside():\n    os.remove(${V} + "/keep.txt")`,
      `def rmtree_outside():\n    shutil.rmtree(${V})`,
      'def network():\n    s = socket.socket()\n    s.connect(("127.0.0.1", 80))',
      'def fork_bomb():\n    while True:\n        os.fork()',
      `def shell():\n    subprocess.run(["rm", "-rf", ${V}])`,
      'def scratch():\n    with open("notes.txt", "w") as f:\n        f.write("ok")\n    with open("notes.txt") as f:\n        return f.read()',
      'def spin():\n    import time\n    while True:\n        time.sleep(0.5)',
    ].join('\n\n') + '\n',
  );
  fs.writeFileSync(path.join(repo, 'test_evil.py'), `import unittest\nimport evil\n\nclass T(unittest.TestCase):\n    def test_attack(self):\n        evil.write_outside()\n`);
  const before = { victim: hashPythonFiles(victim), keep: fs.readFileSync(path.join(victim, 'keep.txt'), 'utf8'), repo: hashPythonFiles(repo), listing: fs.readdirSync(repo).sort() };
  let pool: SandboxPool;
  let byEntry: Map<string, RepoTraceRecord>;
  beforeAll(async () => {
    const spec = repoSpec(repo);
    pool = new SandboxPool(1, { isolation: mode, timeoutS: 2, readOnlyPaths: repoReadPaths([spec]) });
    const entries = ['write_outside', 'write_repo', 'remove_outside', 'rmtree_outside', 'network', 'fork_bomb', 'shell', 'scratch', 'spin'].map((f) => `call:evil:${f}()`);
    entries.push('unittest:test_evil.T.test_attack');
    byEntry = new Map();
    for await (const r of traceRepoEntries(pool, spec, 'evil', entries)) byEntry.set(r.entry, r);
  });
  afterAll(async () => {
    await pool.close();
    fs.rmSync(victim, { recursive: true, force: true });
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it.each(['write_outside', 'write_repo', 'remove_outside', 'rmtree_outside', 'network', 'fork_bomb', 'shell'])('%s is refused and labelled', (f) => {
    const r = byEntry.get(`call:evil:${f}()`) as RepoTraceRecord;
    expect(r.status).toBe('error');
    // bwrap's read-only filesystem answers some writes before the guards see them (EROFS).
    if (r.limit !== 'sandbox') expect([mode, r.error]).toEqual(['bwrap', expect.stringMatching(/Read-only file system|Permission denied/)]);
    else expect(r.blocked?.length).toBeGreaterThan(0);
  });

  it('a test of the suite that attacks is refused too; the test runner reports it', () => {
    const r = byEntry.get('unittest:test_evil.T.test_attack') as RepoTraceRecord;
    expect(r.status).toBe('normal');
    expect(r.outcome).toMatch(/^passed 0 of 1; test_evil\.T\.test_attack: error/);
    expect(r.events.some((e) => e.event === 'exception' && /ndbg sandbox|Read-only/.test(e.value ?? ''))).toBe(true);
  });

  it('the scratch directory is writable and a loop ends at the time bound', () => {
    expect(byEntry.get('call:evil:scratch()')).toMatchObject({ status: 'normal', outcome: "returned 'ok'" });
    expect(byEntry.get('call:evil:spin()')).toMatchObject({ status: 'never', limit: 'timeout', bounds: { timeout_s: 2 } });
  });

  it('leaves the repository and the victim directory as they were', () => {
    expect(hashPythonFiles(victim)).toEqual(before.victim);
    expect(fs.readFileSync(path.join(victim, 'keep.txt'), 'utf8')).toBe(before.keep);
    expect(fs.readdirSync(repo).filter((n) => n !== '__pycache__').sort()).toEqual(before.listing);
    expect(hashPythonFiles(repo)).toEqual(before.repo);
  });
});

it('leaves out a virtual environment inside the checkout: its code is library code', async () => {
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-venv-repo-'));
  const site = path.join(repo, '.venv', 'lib', 'python3.11', 'site-packages');
  fs.mkdirSync(site, { recursive: true });
  fs.writeFileSync(path.join(site, 'helper.py'), 'def double(x):\n    return 2 * x\n');
  fs.writeFileSync(path.join(repo, 'app.py'), 'import helper\n\ndef run(n):\n    return helper.double(n) + 1\n');
  const spec = repoSpec(repo, { path: ['.', site] });
  const pool = new SandboxPool(1, { isolation: 'guards' });
  try {
    const [r] = await collect(traceRepoEntries(pool, spec, 'app', ['call:app:run(4)']));
    expect([r.status, r.outcome, Object.keys(r.files)]).toEqual(['normal', 'returned 9', ['app.py']]);
    expect(r.events.map((e) => e.func)).toEqual(['run', 'run', 'run']);
  } finally {
    await pool.close();
    fs.rmSync(repo, { recursive: true, force: true });
  }
});

describe('repository specs and the manifest', () => {
  it('rejects a path that is not a repository with a message naming it', () => {
    expect(() => repoSpec('/no/such/repo')).toThrow(new UserError('--repo /no/such/repo: no such file or directory'));
    expect(() => repoSpec(path.join(SHOP, 'tests', '__init__.py').replace('.py', '.txt'))).toThrow(UserError);
    expect(() => repoSpec(SHOP, { path: ['src'] })).toThrow(/--path src: no directory/);
  });

  it('resolves standard-library modules and installed packages as repositories', () => {
    const [json] = moduleTargets(['json'], 'python3');
    expect(json).toMatchObject({ id: 'stdlib/json', package: 'json', spec: { path: [], doctest: ['json'], unittest: false } });
    expect(path.basename(json.spec.root)).toBe('json');
    // An installed package: a site directory with the package and its distribution metadata.
    const site = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-site-'));
    fs.mkdirSync(path.join(site, 'fakepkg', 'sub'), { recursive: true });
    fs.writeFileSync(path.join(site, 'fakepkg', '__init__.py'), 'def f():\n    return 1\n');
    fs.writeFileSync(path.join(site, 'fakepkg', 'sub', '__init__.py'), '');
    fs.mkdirSync(path.join(site, 'fakepkg-1.2.3.dist-info'));
    fs.writeFileSync(path.join(site, 'fakepkg-1.2.3.dist-info', 'METADATA'), 'Metadata-Version: 2.1\nName: fakepkg\nVersion: 1.2.3\n');
    fs.writeFileSync(path.join(site, 'fakepkg-1.2.3.dist-info', 'top_level.txt'), 'fakepkg\n');
    const saved = process.env.PYTHONPATH;
    process.env.PYTHONPATH = site;
    try {
      const [pkg, sub] = moduleTargets(['fakepkg', 'fakepkg.sub'], 'python3', true);
      expect(pkg).toMatchObject({ id: 'package/fakepkg', version: '1.2.3', spec: { root: fs.realpathSync(path.join(site, 'fakepkg')), path: [fs.realpathSync(site)] } });
      expect(sub.spec.path).toEqual([fs.realpathSync(site)]);
      expect(() => moduleTargets(['nosuchpkg'], 'python3', true)).toThrow(new UserError('--package nosuchpkg: not a pure-Python module of python3'));
    } finally {
      if (saved === undefined) delete process.env.PYTHONPATH;
      else process.env.PYTHONPATH = saved;
      fs.rmSync(site, { recursive: true, force: true });
    }
  });

  it('records package, version, commit, file hashes and statuses', () => {
    const spec = repoSpec(SHOP);
    const m = manifestEntry('shop', spec, [{ status: 'normal' }, { status: 'never' }] as RepoTraceRecord[], { version: '1.0' });
    expect(m).toMatchObject({ id: 'shop', package: 'shop', version: '1.0', entries: 2, statuses: { normal: 1, never: 1 } });
    expect(Object.keys(m.files)).toEqual(['inventory/__init__.py', 'inventory/errors.py', 'inventory/models.py', 'inventory/pricing.py', 'inventory/report.py', 'tests/__init__.py', 'tests/test_models.py', 'tests/test_report.py']);
    expect(m.files['inventory/errors.py']).toMatch(/^[0-9a-f]{64}$/);
  });
});

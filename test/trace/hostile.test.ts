import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { probeBwrap } from '../../src/trace/isolation';
import { SandboxPool, traceProgram } from '../../src/trace/index';
import type { TraceRecord } from '../../src/trace/types';
import { repoReadPaths, repoSpec, RepoTraceRecord, traceRepoEntries } from '../../src/trace/repo';

/**
 * Hostile programs: each must end with a labelled status, the batch must complete, and the
 * victim directory outside the sandbox's working directory must not change. Runs under the
 * guards-only sandbox always, and under bubblewrap too where it works on this machine.
 */
const victim = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-victim-'));
fs.writeFileSync(path.join(victim, 'keep.txt'), 'precious\n');
fs.mkdirSync(path.join(victim, 'sub'));
fs.writeFileSync(path.join(victim, 'sub', 'also.txt'), 'also\n');
const V = JSON.stringify(victim);

function snapshot(dir: string): string[] {
  const out: string[] = [];
  for (const name of fs.readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    const st = fs.statSync(p);
    out.push(`${name} ${st.mode} ${st.mtimeMs}`);
    if (st.isDirectory()) out.push(...snapshot(p).map((l) => `${name}/${l}`));
    else out.push(fs.readFileSync(p, 'utf8'));
  }
  return out;
}

interface Case {
  code: string;
  status: TraceRecord['status'];
  limit?: string;
  error?: RegExp;
  check?: (r: TraceRecord) => void;
}

const cases: Record<string, Case> = {
  infinite_loop: { code: 'def f():\n    while True:\n        pass', status: 'never', limit: 'steps' },
  swallowing_loop: {
    code: 'def f():\n    while True:\n        try:\n            while True: pass\n        except BaseException:\n            pass',
    status: 'never',
    limit: 'timeout',
  },
  sleep: { code: 'import time\ndef f():\n    time.sleep(60)', status: 'never', limit: 'timeout' },
  memory_hog: { code: 'def f():\n    chunks = [bytearray(1 << 24) for _ in range(100)]\n    return len(chunks)', status: 'error', limit: 'memory', error: /^MemoryError/ },
  huge_alloc: { code: 'def f():\n    return len([0] * 10**10)', status: 'error', limit: 'memory' },
  fork_bomb: { code: 'import os\ndef f():\n    while True:\n        os.fork()', status: 'error', limit: 'sandbox', check: (r) => expect(r.blocked).toContain('os.fork') },
  fork_caught: {
    code: 'import os\ndef f():\n    n = 0\n    for i in range(5):\n        try:\n            os.fork()\n        except Exception:\n            n += 1\n    return n',
    status: 'normal',
    check: (r) => expect(r.blocked).toEqual(['os.fork']),
  },
  subprocess_rm: { code: `import subprocess\ndef f():\n    subprocess.run(["rm", "-rf", ${V}])`, status: 'error', limit: 'sandbox' },
  os_system: { code: `import os\ndef f():\n    os.system("rm -rf " + ${V})`, status: 'error', limit: 'sandbox' },
  rmtree_outside: { code: `import shutil\ndef f():\n    shutil.rmtree(${V})`, status: 'error', limit: 'sandbox' },
  remove_outside: { code: `import os\ndef f():\n    os.remove(os.path.join(${V}, "keep.txt"))`, status: 'error', limit: 'sandbox' },
  rename_outside: { code: `import os\ndef f():\n    os.rename(os.path.join(${V}, "keep.txt"), "stolen.txt")`, status: 'error', limit: 'sandbox' },
  create_outside: { code: `def f():\n    open(${V} + "/new.txt", "w").write("x")`, status: 'error', limit: 'sandbox' },
  module_level_delete: { code: `import shutil\nshutil.rmtree(${V})\ndef f():\n    return 1`, status: 'error', limit: 'sandbox' },
  files_inside_ok: {
    code: 'import os\ndef f():\n    open("x.txt", "w").write("x")\n    os.mkdir("d")\n    os.remove("x.txt")\n    return sorted(os.listdir("."))',
    status: 'normal',
    check: (r) => expect(r.events[r.events.length - 1].value).toBe("['d']"),
  },
  print_1gb: {
    code: 'def f():\n    for _ in range(1024):\n        print("x" * (1 << 20))\n    return 1',
    status: 'normal',
    check: (r) => {
      expect(r.stdout!.length).toBe(65536);
      expect(r.stdout_truncated).toBe(1024 * ((1 << 20) + 1) - 65536);
    },
  },
  fd_write_flood: { code: 'import os\ndef f():\n    for _ in range(100):\n        os.write(1, b"x" * (1 << 20))', status: 'error', limit: 'output', check: (r) => expect(r.stdout!.length).toBe(65536) },
  // The RecursionError also hits the trace function, so CPython switches tracing off: labelled.
  deep_recursion: { code: 'def f(n=0):\n    return f(n + 1)', status: 'error', limit: 'traceoff', error: /^RecursionError/ },
  unbounded_recursion: { code: 'import sys\nsys.setrecursionlimit(10**6)\ndef f(n=0):\n    return f(n + 1)', status: 'never', limit: 'steps' },
  os_exit: {
    code: 'import os\ndef f():\n    x = 1\n    os._exit(3)',
    status: 'error',
    limit: 'exit',
    check: (r) => expect(r.events.some((e) => e.locals.x === '1')).toBe(true), // partial trace kept
  },
  sys_exit: { code: 'import sys\ndef f():\n    sys.exit(4)', status: 'error', error: /^SystemExit: 4/ },
  signal_tampering: {
    code: 'import signal\ndef f():\n    for s in (signal.SIGTERM, signal.SIGALRM, signal.SIGXCPU, signal.SIGINT):\n        signal.signal(s, signal.SIG_IGN)\n    while True: pass',
    status: 'never',
    limit: 'timeout',
  },
  kill_parent: { code: 'import os, signal\ndef f():\n    os.kill(os.getppid(), signal.SIGKILL)', status: 'error', limit: 'sandbox' },
  repr_raises: {
    code: 'class A:\n    def __repr__(self):\n        raise ValueError("no")\ndef f():\n    a = A()\n    return 1',
    status: 'normal',
    check: (r) => expect(r.events.some((e) => e.locals.a === '<repr failed: A>')).toBe(true),
  },
  repr_sleeps: { code: 'import time\nclass A:\n    def __repr__(self):\n        time.sleep(60)\n        return "A"\ndef f():\n    a = A()\n    return 1', status: 'never', limit: 'timeout' },
  settrace_off: { code: 'import sys\ndef f():\n    sys.settrace(None)\n    return 1', status: 'error', limit: 'traceoff' },
  network: { code: 'import socket\ndef f():\n    socket.create_connection(("127.0.0.1", 9), timeout=1)', status: 'error', limit: 'sandbox' },
  // Replaces its own working directory with a link to the victim: cleaning up after it must
  // remove the link, not what it points to.
  workdir_symlink: {
    code: `import os\ndef f():\n    cwd = os.getcwd()\n    os.chdir("/")\n    os.rmdir(cwd)\n    os.symlink(${V}, cwd)\n    return 1`,
    status: 'normal',
  },
  syntax_error: { code: 'def f(:\n    pass', status: 'error', error: /^SyntaxError/ },
  reads_stdin: { code: 'def f():\n    return input()', status: 'error', error: /^EOFError/ },
};

// Each isolation mode with the shared child (default), and guards with a fresh fork for every
// program too, so the programs the shared child takes are also run the other way.
const modes: Array<['guards' | 'bwrap', string, number | undefined]> = [
  ['guards', 'shared child', undefined],
  ['guards', 'fork each', 0],
  ...(probeBwrap().ok ? [['bwrap', 'shared child', undefined] as ['bwrap', string, undefined]] : []),
];

afterAll(() => fs.rmSync(victim, { recursive: true, force: true }));

describe.each(modes)('hostile programs, isolation %s, %s', (mode, _process, sessionPrograms) => {
  const before = snapshot(victim);
  let pool: SandboxPool;
  const results = new Map<string, TraceRecord>();

  beforeAll(async () => {
    pool = new SandboxPool(2, { isolation: mode, timeoutS: 2, memoryMb: 256, sessionPrograms });
    const recs = await Promise.all(
      Object.entries(cases).map(([id, c]) => traceProgram({ id, code: c.code, call: 'f()' }, { pool })),
    );
    for (const r of recs) results.set(r.id, r);
  });
  afterAll(() => pool.close());

  it('runs under the requested isolation', () => {
    expect(pool.mode).toBe(mode);
    for (const r of results.values()) expect(r.isolation).toBe(mode);
  });

  it.each(Object.keys(cases))('%s ends with the expected labelled status', (id) => {
    const c = cases[id];
    const r = results.get(id)!;
    expect({ id, status: r.status, limit: r.limit }).toEqual({ id, status: c.status, limit: c.limit });
    if (c.status !== 'normal') expect(r.error).toBeTruthy();
    if (c.error) expect(r.error).toMatch(c.error);
    c.check?.(r);
  });

  it('left the directory outside the sandbox unchanged', () => {
    expect(snapshot(victim)).toEqual(before);
  });

  it('keeps working afterwards, and each program gets an empty private working directory', async () => {
    const one = new SandboxPool(1, { isolation: mode });
    try {
      const w = await traceProgram({ id: 'w', code: 'def f():\n    open("left.txt", "w").write("x")\n    return 1', call: 'f()' }, { pool: one });
      expect(w.status).toBe('normal');
      const look = await traceProgram({ id: 'look', code: 'import os\ndef f():\n    return os.listdir(".")', call: 'f()' }, { pool: one });
      expect(look.events[look.events.length - 1].value).toBe('[]');
    } finally {
      await one.close();
    }
  });
});

/**
 * The same programs as modules of a repository, each traced through `call:MODULE:f()` like a
 * repository's entry point (docs/trace.md, "Repository traces"): the same containment and the
 * same labels. Differences are by construction: a module that does not compile, or whose body
 * is refused, fails at import, before tracing, as an entry error.
 */
const REPO_LABELS: Record<string, Partial<Case>> = {
  syntax_error: { error: /^EntryError: import hostile_syntax_error failed: SyntaxError/ },
  module_level_delete: { error: /^EntryError: import hostile_module_level_delete failed: SandboxViolation: ndbg sandbox: shutil\.rmtree blocked/ },
};

describe.each(modes.filter(([, , session]) => session === undefined))('hostile programs as repository modules, isolation %s', (mode) => {
  const before = snapshot(victim);
  const repo = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-hostile-modules-'));
  for (const [id, c] of Object.entries(cases)) fs.writeFileSync(path.join(repo, `hostile_${id}.py`), c.code + '\n');
  const files = snapshot(repo);
  let pool: SandboxPool;
  const results = new Map<string, RepoTraceRecord>();

  beforeAll(async () => {
    const spec = repoSpec(repo);
    pool = new SandboxPool(2, { isolation: mode, timeoutS: 2, memoryMb: 256, readOnlyPaths: repoReadPaths([spec]) });
    const ids = Object.keys(cases);
    for await (const r of traceRepoEntries(pool, spec, 'hostile', ids.map((id) => `call:hostile_${id}:f()`))) results.set(r.entry.split(':')[1].slice('hostile_'.length), r);
  });
  afterAll(async () => {
    await pool.close();
    fs.rmSync(repo, { recursive: true, force: true });
  });

  it.each(Object.keys(cases))('%s ends with the expected labelled status', (id) => {
    const c = { ...cases[id], ...REPO_LABELS[id] };
    const r = results.get(id)!;
    expect({ id, status: r.status, limit: r.limit, isolation: r.isolation }).toEqual({ id, status: c.status, limit: c.limit, isolation: mode });
    if (c.status !== 'normal') expect(r.error).toBeTruthy();
    if (c.error) expect(r.error).toMatch(c.error);
    c.check?.(r as unknown as TraceRecord);
  });

  it('left the repository and the directory outside the sandbox unchanged', () => {
    expect(snapshot(victim)).toEqual(before);
    expect(snapshot(repo)).toEqual(files);
  });
});

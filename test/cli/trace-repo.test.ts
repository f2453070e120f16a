import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { tempDir } from '../helpers/tmp';
import { SHOP } from '../helpers/repo';

/**
 * The repository-level chain through the real CLI (dist/, built by test/global-setup.ts):
 * trace-repo → manifest → ndl scope (held out by repository) → ndl → oracle check; and the
 * bad-input policy of the new flags (one `ndbg: ...` line naming the flag or file, exit 2).
 */
const cli = path.resolve(__dirname, '../../bin/ndbg.js');
const tmp = tempDir('trace-repo-cli');
const at = (name: string) => path.join(tmp, name);

function ndbg(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: tmp, encoding: 'utf8', timeout: 120000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const read = (file: string) => fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);

it('traces the fixture, scopes it with a held-out repository, writes documents and agrees with pdb', () => {
  fs.writeFileSync(
    at('corpus.json'),
    JSON.stringify({ repos: [{ repo: SHOP, id: 'shop', doctest: ['inventory.pricing'], version: '0.1' }, { stdlib: 'colorsys', entries: ['call:colorsys:rgb_to_hsv(0.2, 0.4, 0.4)'] }] }),
  );
  const t = ndbg(['trace-repo', '--corpus', at('corpus.json'), '--max-entries', '4', '--out', at('repo.jsonl'), '--quiet']);
  expect([t.code, t.stderr]).toEqual([0, expect.stringMatching(/wrote .*repo\.jsonl/)]);
  const manifest = JSON.parse(fs.readFileSync(at('repo.jsonl.manifest.json'), 'utf8'));
  expect(manifest.repos.map((r: { id: string; entries: number; version: string }) => [r.id, r.entries, r.version])).toEqual([
    ['shop', 4, '0.1'],
    ['stdlib/colorsys', 1, manifest.python],
  ]);
  expect(Object.keys(manifest.repos[1].files)).toEqual(['colorsys.py']);
  expect(read(at('repo.jsonl')).map((r) => r.status)).toEqual(['normal', 'normal', 'normal', 'normal', 'normal']);

  const s = ndbg(['ndl', 'scope', '--traces', at('repo.jsonl'), '--out', at('train.jsonl'), '--holdout-out', at('held.jsonl'), '--holdout-repos', 'stdlib/colorsys']);
  expect(s.code).toBe(0);
  expect(JSON.parse(s.stdout)).toMatchObject({ repoTraces: 5, heldOutRepos: ['stdlib/colorsys'] });
  expect(read(at('held.jsonl')).every((r) => (r.scope as { repo_id: string }).repo_id === 'stdlib/colorsys')).toBe(true);
  expect(read(at('train.jsonl')).every((r) => (r.scope as { repo_id: string }).repo_id === 'shop')).toBe(true);

  expect(ndbg(['ndl', '--traces', at('train.jsonl'), '--out', at('docs.jsonl'), '--per-program', '2', '--quiet']).code).toBe(0);
  const docs = read(at('docs.jsonl'));
  expect(docs.every((d) => d.repo === 'shop' && String(d.text).includes('<|trace_context_start|># file: '))).toBe(true);

  // The evaluator scores held-out repositories apart; with the true next states it scores 100%.
  const ev = ndbg(['eval', 'next-state', '--oracle', '--repo-traces', at('held.jsonl'), '--per-program', '1', '--actions', 'step_into,step_return,inv_step_into', '--out', at('eval'), '--quiet']);
  expect([ev.code, ev.stdout]).toEqual([0, expect.stringContaining('next_state_repo.json')]);
  const report = JSON.parse(fs.readFileSync(at('eval/next_state_repo.json'), 'utf8'));
  expect(report).toMatchObject({ level: 'repository', repositories: ['stdlib/colorsys'], full_match_oracle: { all: 1 } });
  expect(report.tasks).toBeGreaterThan(0);
  expect(fs.existsSync(at('eval/next_state.json'))).toBe(false);

  const check = ndbg(['oracle', 'check', '--trace', at('train.jsonl'), '--scripts', '5', '--count', '--quiet']);
  expect(check.code).toBe(0);
  expect(JSON.parse(check.stdout)).toMatchObject({ byVerdict: { other: 0 } });
});

it.each([
  [['trace-repo', '--out', 'x.jsonl'], /^ndbg: give --repo DIR, --stdlib MODULES, --package PACKAGES or --corpus FILE/],
  [['trace-repo', '--repo', 'nowhere', '--out', 'x.jsonl'], /^ndbg: --repo nowhere: no such file or directory/],
  [['trace-repo', '--stdlib', 'posixpath', '--out', 'x.jsonl'], /^ndbg: --stdlib posixpath: not a pure-Python module/],
  [['trace-repo', '--corpus', 'bad-corpus.json', '--out', 'x.jsonl'], /^ndbg: invalid config bad-corpus\.json:\n {2}repos\.0: give exactly one of stdlib, package and repo/],
  [['ndl', 'scope', '--traces', 'programs.jsonl', '--out', 'x.jsonl'], /^ndbg: programs\.jsonl:1: not a repository trace record .*kind/],
  [['eval', 'next-state', '--oracle', '--repo-traces', 'programs.jsonl', '--out', 'x.jsonl'], /^ndbg: programs\.jsonl:1: not a trace record|^ndbg: --repo-traces programs\.jsonl: trace p is not repository-level/],
  [['eval', 'next-state', '--oracle', '--out', 'x.jsonl'], /^ndbg: give --programs \(function-level\) and\/or --repo-traces/],
])('%j fails with one clear line', (args, message) => {
  fs.writeFileSync(at('bad-corpus.json'), JSON.stringify({ repos: [{ stdlib: 'json', repo: '.' }] }));
  fs.writeFileSync(at('programs.jsonl'), JSON.stringify({ id: 'p', code: 'def f(x):\n    return x\n', input: '1' }) + '\n');
  const r = ndbg(args as string[]);
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(fs.existsSync(at('x.jsonl'))).toBe(false);
});

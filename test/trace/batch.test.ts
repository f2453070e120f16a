import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { formatSummary, readDoneIds, runTraceBatch } from '../../src/trace/batch';
import { parseShardSpec as parseShard, shardOfKey as shardOf } from '../../src/util/shard';
import type { TraceRecord } from '../../src/trace/types';
import { setSkipInvalid } from '../../src/util/jsonl';
import { FIXTURES } from './helpers';

const ROOT = path.join(__dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-trace-batch-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const fixture = fs.readFileSync(path.join(FIXTURES, 'programs.jsonl'), 'utf8').trim().split('\n');
const ids = fixture.map((l) => (JSON.parse(l) as { id: string }).id);

function readOut(file: string): TraceRecord[] {
  return fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as TraceRecord);
}

async function run(input: string, out: string, extra: Partial<Parameters<typeof runTraceBatch>[0]> = {}) {
  const warnings: string[] = [];
  const summary = await runTraceBatch({ input, out, workers: 2, sandbox: { timeoutS: 5 }, quiet: true, warn: (m) => warnings.push(m), ...extra });
  return { summary, warnings };
}

describe('ndbg trace batch mode', () => {
  it('a malformed line is an error naming file:line; with --skip-invalid it is reported, skipped and the rest traced', async () => {
    const input = path.join(tmp, 'mixed.jsonl');
    const lines = [
      fixture[0],
      '{"id": "broken", "code": ',
      fixture[1],
      '{"id": "nocode", "input": "1"}',
      '',
      '{"id": "badentry", "code": "def f(): pass", "input": "", "entry": "f()"}',
      '[1, 2]',
      fixture[2],
    ];
    fs.writeFileSync(input, lines.join('\n') + '\n');
    const out = path.join(tmp, 'mixed.out.jsonl');
    await expect(run(input, path.join(tmp, 'mixed.strict.jsonl'))).rejects.toThrow(`${input}:2: invalid JSON`);
    setSkipInvalid(true);
    const { summary, warnings } = await run(input, out).finally(() => setSkipInvalid(false));
    expect(summary.traced).toBe(3);
    expect(summary.malformed).toBe(4);
    expect(summary.malformed_lines).toEqual([2, 4, 6, 7]);
    expect(warnings.some((w) => w.startsWith(`${input}:2: invalid JSON`))).toBe(true);
    expect(warnings.some((w) => w.includes(`${input}:4: code: Required`))).toBe(true);
    expect(warnings.some((w) => w.includes(`${input}:6: entry: must be a Python identifier`))).toBe(true);
    expect(readOut(out).map((r) => r.id)).toEqual(ids.slice(0, 3));
    expect(summary.by_status).toEqual({ normal: 3 });
    expect(summary.ran_shared + summary.ran_forked).toBe(3);
  });

  it('says which programs ran in the shared child and which in fresh forks', async () => {
    const input = path.join(tmp, 'processes.jsonl');
    const progs = [
      { id: 'pure', code: 'def f(x):\n    return x * 2', input: '3' },
      { id: 'imports', code: 'import math\ndef f(x):\n    return math.floor(x)', input: '2.5' },
      { id: 'pure2', code: 'def f(xs):\n    return sorted(xs)', input: '[3, 1]' },
    ];
    fs.writeFileSync(input, progs.map((p) => JSON.stringify(p)).join('\n') + '\n');
    const shared = await run(input, path.join(tmp, 'processes.out.jsonl'), { workers: 1 });
    expect([shared.summary.ran_shared, shared.summary.ran_forked]).toEqual([2, 1]);
    expect(formatSummary(shared.summary)).toContain('processes: 2 in the shared child, 1 in fresh forks');
    const each = await run(input, path.join(tmp, 'processes.each.jsonl'), { workers: 1, sandbox: { sessionPrograms: 0 } });
    expect([each.summary.ran_shared, each.summary.ran_forked]).toEqual([0, 3]);
    expect(fs.readFileSync(path.join(tmp, 'processes.each.jsonl'), 'utf8')).toBe(fs.readFileSync(path.join(tmp, 'processes.out.jsonl'), 'utf8'));
  });

  it('resumes: skips ids already written and repairs a truncated last line', async () => {
    const input = path.join(tmp, 'all.jsonl');
    fs.writeFileSync(input, fixture.join('\n') + '\n');
    const out = path.join(tmp, 'resume.out.jsonl');
    // A previous run wrote the first 5 records, then died in the middle of the 6th.
    const first = await run(path.join(FIXTURES, 'programs.jsonl'), path.join(tmp, 'full.out.jsonl'));
    expect(first.summary.traced).toBe(ids.length);
    const full = fs.readFileSync(path.join(tmp, 'full.out.jsonl'), 'utf8').split('\n');
    fs.writeFileSync(out, full.slice(0, 5).join('\n') + '\n' + full[5].slice(0, 40));
    const { summary, warnings } = await run(input, out);
    expect(warnings.some((w) => w.includes('removed a truncated last line'))).toBe(true);
    expect(summary.skipped_done).toBe(5);
    expect(summary.traced).toBe(ids.length - 5);
    const recs = readOut(out);
    expect(recs.map((r) => r.id)).toEqual(ids);
    // the resumed file has the same bytes as an uninterrupted run
    expect(fs.readFileSync(out, 'utf8')).toBe(fs.readFileSync(path.join(tmp, 'full.out.jsonl'), 'utf8'));
    // and a third run has nothing left to do
    const again = await run(input, out);
    expect(again.summary.traced).toBe(0);
    expect(again.summary.skipped_done).toBe(ids.length);
  });

  it('shards partition the ids deterministically, whatever the input order', async () => {
    expect(parseShard('1/3')).toEqual({ index: 1, count: 3 });
    expect(() => parseShard('3/3')).toThrow(/0 <= I < N/);
    expect(() => parseShard('a/b')).toThrow(/expected I\/N/);
    const manyIds = Array.from({ length: 300 }, (_, i) => `sample_${i}`);
    const counts = [0, 0, 0];
    for (const id of manyIds) counts[shardOf(id, 3)]++;
    expect(Math.min(...counts)).toBeGreaterThan(60); // spread, not all in one shard
    expect(shardOf('sample_7', 3)).toBe(shardOf('sample_7', 3));

    const reversed = path.join(tmp, 'reversed.jsonl');
    fs.writeFileSync(reversed, [...fixture].reverse().join('\n') + '\n');
    const got: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const out = path.join(tmp, `shard${i}.jsonl`);
      const { summary } = await run(i === 1 ? reversed : path.join(FIXTURES, 'programs.jsonl'), out, { shard: { index: i, count: 3 }, workers: 1 });
      const shardIds = fs.existsSync(out) && fs.statSync(out).size ? readOut(out).map((r) => r.id) : [];
      expect(summary.other_shard).toBe(ids.length - shardIds.length);
      expect(shardIds.every((id) => shardOf(id, 3) === i)).toBe(true);
      got.push(shardIds);
    }
    expect(got.flat().sort()).toEqual([...ids].sort());
  });

  it('readDoneIds ignores a missing file and reports unreadable middle lines', () => {
    expect(readDoneIds(path.join(tmp, 'nope.jsonl')).size).toBe(0);
    const f = path.join(tmp, 'bad-middle.jsonl');
    fs.writeFileSync(f, '{"id":"a","x":1}\nnot json\n{"id": "b"}\n');
    const warnings: string[] = [];
    expect([...readDoneIds(f, (m) => warnings.push(m))]).toEqual(['a', 'b']);
    expect(warnings).toEqual([`${f}:2: unreadable record, its program will be traced again`]);
  });
});

describe('ndbg trace CLI', () => {
  const cli = path.join(ROOT, 'bin', 'ndbg.js');

  it('prints a readable trace of the README example and appends JSONL with --out', () => {
    const out = path.join(tmp, 'count.jsonl');
    const text = execFileSync('node', [cli, 'trace', '--program', path.join(ROOT, 'examples', 'count.py'), '--call', 'count("berry", "r")', '--out', out], { encoding: 'utf8' });
    expect(text).toMatch(/^count\("berry", "r"\) -> 2 {3}\[normal · 18 events · python 3\.\d+\.\d+ · sandbox (bwrap|guards)\]/);
    expect(text).toMatch(/ 2 {2}call {9}1 {4}def count\(s, t\): +s='berry' {2}t='r'/);
    expect(text).toMatch(/16 {2}return {7}5 {8}return n +-> 2/);
    expect(text).toContain('exit: normal');
    const [rec] = readOut(out);
    expect(rec).toMatchObject({ id: 'count', entry_call: 'count("berry", "r")', status: 'normal' });
    expect(rec.events).toHaveLength(18);
  });

  it('batch mode prints the summary, and bad flags fail with one clear line', () => {
    const out = path.join(tmp, 'cli.jsonl');
    const res = execFileSync('node', [cli, 'trace', '--input', path.join(FIXTURES, 'programs.jsonl'), '--out', out, '--workers', '2', '--quiet'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(res).toBe('');
    expect(readOut(out)).toHaveLength(ids.length);
    let err = '';
    try {
      execFileSync('node', [cli, 'trace', '--input', path.join(tmp, 'missing.jsonl'), '--out', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      err = (e as { stderr: string }).stderr;
    }
    expect(err).toBe(`ndbg: --input ${path.join(tmp, 'missing.jsonl')}: no such file\n`);
  });
});

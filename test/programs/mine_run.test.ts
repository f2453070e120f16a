import * as fs from 'fs';
import * as path from 'path';
import { mineToFile, MINE_DEFAULTS, type MineRunOptions } from '../../src/cli/mine_run';
import { directoryFiles } from '../../src/programs/mine_corpus';
import { tempDir } from '../helpers/tmp';

/**
 * Mining in the sandbox (what `ndbg programs mine` and the quickstart's stage 4 run). The
 * fixture's first function appends to `keyword.kwlist` (which the shared first look lets in:
 * purity.py), and both read that list. In a process shared between calls, a call's first look
 * sees what the calls before it appended, so whether it passes the determinism check (a fresh
 * fork) depends on which calls ran before it in that process.
 */
const FIXTURE = path.join(__dirname, '..', 'fixtures', 'mine-state');
const dir = tempDir('mine-run');
const files = directoryFiles(FIXTURE, { package: 'ctx', version: null, license: null });
const options = (workers: number, sharedFirstLook: boolean): MineRunOptions => ({ ...MINE_DEFAULTS, seed: 0, python: 'python3', workers, againstFile: null, sharedFirstLook });
const functionsOf = (records: Array<{ source: { function: string } }>) => [...new Set(records.map((r) => r.source.function))].sort();

describe('mineToFile', () => {
  test('each call in a fresh fork: the same bytes whatever the workers, and no call lost to an earlier one', async () => {
    const one = await mineToFile(files, options(1, false), path.join(dir, 'one.jsonl'));
    const two = await mineToFile(files, options(2, false), path.join(dir, 'two.jsonl'));
    expect(fs.readFileSync(path.join(dir, 'two.jsonl'), 'utf8')).toBe(fs.readFileSync(path.join(dir, 'one.jsonl'), 'utf8'));
    expect(functionsOf(one.records)).toEqual(['add_keyword', 'count_keywords']);
    expect(one.summary.callRejections.nondeterministic ?? 0).toBe(0);
    expect(two.summary.functionsKept).toBe(2);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'one.jsonl.manifest.json'), 'utf8'));
    expect(manifest).toMatchObject({ format: 'ndbg-mined-programs/1', first_look: 'fresh fork', functionsKept: 2, recordsKept: one.records.length });
  }, 120_000);

  test("a shared first look carries a module's state into later calls, which the fresh-fork check then rejects", async () => {
    const shared = await mineToFile(files, options(1, true), path.join(dir, 'shared.jsonl'));
    expect(shared.summary.callRejections.nondeterministic).toBeGreaterThan(0);
    expect(functionsOf(shared.records)).toEqual([]);
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'shared.jsonl.manifest.json'), 'utf8')).first_look).toBe('shared process');
  }, 120_000);
});

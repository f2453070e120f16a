import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MixtureLoader } from '../../src/data/loader';
import { readManifest, type Manifest } from '../../src/data/manifest';
import { shardOfKey } from '../../src/util/shard';
import { ndbg, ROOT, writePrograms } from './helpers';

const SCHEDULER_VARS = ['SLURM_ARRAY_TASK_ID', 'SLURM_ARRAY_TASK_MIN', 'SLURM_ARRAY_TASK_MAX', 'SLURM_ARRAY_TASK_COUNT', 'SLURM_ARRAY_TASK_STEP', 'JOB_COMPLETION_INDEX', 'NDBG_SHARD_INDEX', 'NDBG_SHARD_COUNT'];

const lines = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim());

/**
 * The recipe of docs/scale-out.md on 3 local "machines": scale/jobs/shard-task.sh run as Slurm
 * array tasks 1 and 2 of --array=1-3 and as Kubernetes Indexed Job pod 2, each tracing, sampling
 * and building its shard; `ndbg data merge` of the parts; and the single-machine builds it must
 * agree with.
 */
describe('data at scale: shard tasks under Slurm and Kubernetes variables, then ndbg data merge', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-shards-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('the merged data set equals the single-machine build: same shards and manifest, same loader order; same documents as an unsharded run', () => {
    const at = (p: string) => path.join(dir, p);
    writePrograms(at('programs.jsonl'), 36);
    const tokenizer = path.join(ROOT, 'tokenizer', 'ndbg-2k.model');
    const build = ['--val-fraction', '0.15', '--shard-mb', '0.02', '--workers', '0'];
    const env: Record<string, string | undefined> = { ...process.env, NDBG: `${process.execPath} ${path.join(ROOT, 'bin', 'ndbg.js')}`, TOKENIZER: tokenizer, SEQ_LEN: '256', PER_PROGRAM: '2' };
    for (const v of SCHEDULER_VARS) delete env[v];
    const tasks: Array<Record<string, string>> = [
      { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_MAX: '3', SLURM_ARRAY_TASK_COUNT: '3' },
      { SLURM_ARRAY_TASK_ID: '2', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_MAX: '3', SLURM_ARRAY_TASK_COUNT: '3' },
      { JOB_COMPLETION_INDEX: '2', NDBG_SHARD_COUNT: '3' },
    ];
    for (const vars of tasks) {
      const r = spawnSync('bash', [path.join(ROOT, 'scale', 'jobs', 'shard-task.sh'), at('programs.jsonl'), at('work'), ...build], { cwd: ROOT, env: { ...env, ...vars }, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`shard-task.sh with ${JSON.stringify(vars)} exited ${r.status}:\n${r.stderr}`);
    }
    const parts = [0, 1, 2].map((i) => at(`work/data-0000${i}`));
    // Each task traced exactly its shard's programs, and together they traced all of them.
    const traced = [0, 1, 2].map((i) => lines(at(`work/traces-0000${i}.jsonl`)).map((l) => (JSON.parse(l) as { id: string }).id));
    traced.forEach((ids, i) => {
      expect(ids.length).toBeGreaterThan(0);
      for (const id of ids) expect(shardOfKey(id, 3)).toBe(i);
    });
    expect(traced.flat().sort()).toEqual(lines(at('programs.jsonl')).map((l) => (JSON.parse(l) as { id: string }).id).sort());

    ndbg(['data', 'merge', ...parts, '--out', at('merged')]);

    // One machine, the same documents in shard order: byte-identical.
    fs.writeFileSync(at('docs-concatenated.jsonl'), [0, 1, 2].map((i) => fs.readFileSync(at(`work/docs-0000${i}.jsonl`), 'utf8')).join(''));
    // ...with the sidecar `ndbg ndl` would have written for them (same sampler, all documents).
    const sidecars = [0, 1, 2].map((i) => JSON.parse(fs.readFileSync(at(`work/docs-0000${i}.jsonl.manifest.json`), 'utf8')) as { documents: number });
    fs.writeFileSync(at('docs-concatenated.jsonl.manifest.json'), JSON.stringify({ ...sidecars[0], documents: sidecars.reduce((a, c) => a + c.documents, 0) }));
    ndbg(['data', 'build', '--source', `ndl=${at('docs-concatenated.jsonl')}:ndl`, '--tokenizer', tokenizer, '--seq-len', '256', '--quiet', '--out', at('single'), ...build]);
    const merged = readManifest(at('merged'));
    const single = readManifest(at('single'));
    const noPaths = (m: Manifest) => ({ ...m, sources: m.sources.map((s) => ({ ...s, path: '', relativePath: '', sidecar: null })) });
    expect(merged.sources[0].generator).toEqual(single.sources[0].generator);
    expect(merged.sources[0].python).toBe(single.sources[0].python);
    expect((merged.sources[0].sidecar!.content.merged_parts as unknown[]).length).toBe(3);
    expect(noPaths(merged)).toEqual(noPaths(single));
    expect(single.sources[0].train.shards.length).toBeGreaterThan(1);
    for (const sh of [...single.sources[0].train.shards, ...single.sources[0].val.shards]) {
      expect(fs.readFileSync(at(`merged/${sh.file}`)).equals(fs.readFileSync(at(`single/${sh.file}`)))).toBe(true);
    }
    const opts = { batchSize: 4, seed: 5, shuffleWindow: 8 };
    const a = new MixtureLoader({ ...opts, datasets: [at('merged')] });
    const b = new MixtureLoader({ ...opts, datasets: [at('single')] });
    for (let i = 0; i < 30; i++) expect(Buffer.from(a.next().ids.buffer).equals(Buffer.from(b.next().ids.buffer))).toBe(true);

    // One machine, no shards at all: the same documents (in program order), so the same counts.
    ndbg(['trace', '--input', at('programs.jsonl'), '--out', at('all-traces.jsonl'), '--quiet']);
    ndbg(['ndl', '--traces', at('all-traces.jsonl'), '--out', at('all-docs.jsonl'), '--per-program', '2', '--quiet']);
    expect(lines(at('docs-concatenated.jsonl')).sort()).toEqual(lines(at('all-docs.jsonl')).sort());
    ndbg(['data', 'build', '--source', `ndl=${at('all-docs.jsonl')}:ndl`, '--tokenizer', tokenizer, '--seq-len', '256', '--quiet', '--out', at('unsharded'), ...build]);
    const unsharded = readManifest(at('unsharded'));
    const counts = (m: Manifest) =>
      m.sources.map((s) => ({ packing: s.packing, ...Object.fromEntries((['train', 'val'] as const).map((k) => [k, { documents: s[k].documents, textBytes: s[k].textBytes, rows: s[k].rows, tokens: s[k].tokens, shards: s[k].shards.length }])) }));
    expect(counts(merged)).toEqual(counts(unsharded));
  });
});

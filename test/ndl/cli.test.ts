import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import yargs from 'yargs';
import { ndlCommand } from '../../src/cli/commands/ndl';
import { defaultSamplerConfig } from '../../src/ndl/config';
import type { NdlRecord } from '../../src/ndl/generate';
import { checkRoundTrips, generateDocuments } from '../../src/ndl/run';
import { renderDocument } from '../../src/ndl/show';
import { readJsonlSync } from '../../src/util/jsonl';
import { countProgram, fixturePrograms, traceAll } from './helpers';
import { reference } from '../helpers/reference';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndl-cli-'));
const tracesFile = path.join(dir, 'traces.jsonl');
const traces = traceAll([countProgram(), ...fixturePrograms().slice(0, 6)]);
fs.writeFileSync(tracesFile, traces.map((t) => JSON.stringify(t)).join('\n') + '\n');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const base = { traces: tracesFile, seed: 4, perProgram: 3, config: defaultSamplerConfig(), quiet: true };

describe('ndbg ndl jobs', () => {
  it('writes K sampled documents per program, identical on a rerun', async () => {
    const out = path.join(dir, 'docs.jsonl');
    const summary = await generateDocuments({ ...base, out, policy: 'sampled' });
    expect(summary).toMatchObject({ programs: traces.length, documents: 3 * traces.length, skipped: 0 });
    const first = fs.readFileSync(out, 'utf8');
    const recs = readJsonlSync<NdlRecord>(out);
    expect(Object.keys(recs[0])).toEqual(['id', 'doc', 'direction', 'actions', 'nodes', 'end', 'text']);
    await expect(generateDocuments({ ...base, out, policy: 'sampled' })).rejects.toThrow(/exists; pass --overwrite/);
    await generateDocuments({ ...base, out, policy: 'sampled', overwrite: true });
    expect(fs.readFileSync(out, 'utf8')).toBe(first);
  });

  it('--policy all-step writes the canonical pair (the reference documents for count)', async () => {
    const out = path.join(dir, 'canon.jsonl');
    await generateDocuments({ ...base, out, policy: 'all-step' });
    const recs = readJsonlSync<NdlRecord>(out).filter((r) => r.id === 'count');
    expect(recs.map((r) => r.text)).toEqual([reference('count.forward.ndl'), reference('count.inverse.ndl')]);
    expect(recs[0].actions.every((a) => a.kind === 'step_into')).toBe(true);
  });

  it('stops at a malformed trace line naming file and line, leaving no partial --out', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(bad, JSON.stringify(traces[0]) + '\n{"id": "x", "code": 3}\n');
    const out = path.join(dir, 'partial.jsonl');
    await expect(generateDocuments({ ...base, traces: bad, out, policy: 'sampled' })).rejects.toThrow(`${bad}:2: not a trace record: code`);
    expect(fs.existsSync(out)).toBe(false);
    expect(fs.readdirSync(dir).filter((f) => f.includes('partial'))).toEqual([]);
    fs.writeFileSync(bad, '{not json\n');
    await expect(generateDocuments({ ...base, traces: bad, out, policy: 'sampled', overwrite: true })).rejects.toThrow(`${bad}:1: invalid JSON`);
  });

  it('check finds no failures on the fixture traces', async () => {
    const summary = await checkRoundTrips(base);
    expect(summary.failures).toEqual([]);
    expect(summary.forward.documents).toBeGreaterThan(traces.length);
  });

  it('show prints one frame per line', async () => {
    const text = reference('count.forward.ndl');
    const out = renderDocument('count', text).split('\n');
    const frames = out.filter((l) => l.startsWith('#'));
    expect(frames).toHaveLength(18);
    expect(frames[2]).toMatch(/^# {2}2 call {10}def count\(s, t\): +\{"s": "'berry'", "t": "'r'"\} {2}-> step_into$/);
    expect(out).toContain('exit: normal');
  });

  it('the yargs command reads --docs and rejects a missing id', async () => {
    const docs = path.join(dir, 'canon.jsonl');
    const writes: string[] = [];
    const spy = jest.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => (writes.push(String(s)), true));
    try {
      await yargs(['ndl', 'show', '--docs', docs, '--id', 'count', '--doc', '1']).command(ndlCommand).strict().parseAsync();
      await expect(
        yargs(['ndl', 'show', '--docs', docs, '--id', 'nope']).command(ndlCommand).fail(false).strict().parseAsync(),
      ).rejects.toThrow(/no document with id nope/);
    } finally {
      spy.mockRestore();
    }
    expect(writes.join('')).toContain('inv_exit_entry');
  });
});

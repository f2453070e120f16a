import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import yargs from 'yargs';
import { programsCommand } from '../../src/cli/commands/programs';

const fx = (name: string) => path.join(__dirname, '../fixtures/programs', name);

async function cli(...argv: string[]): Promise<string> {
  const chunks: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
    chunks.push(String(c));
    return true;
  });
  try {
    await yargs(argv).command(programsCommand).strict().fail((msg, err) => {
      throw err ?? new Error(msg);
    }).parseAsync();
  } finally {
    spy.mockRestore();
  }
  return chunks.join('');
}

describe('ndbg programs', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-programs-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('generate writes records and a summary; the same seed gives the same bytes', async () => {
    const a = path.join(tmp, 'a.jsonl');
    const b = path.join(tmp, 'b.jsonl');
    const text = await cli('programs', 'generate', '--n', '4', '--seed', '3', '--out', a, '--raw', '--quiet');
    await cli('programs', 'generate', '--n', '4', '--seed', '3', '--out', b, '--raw', '--quiet');
    expect(text).toMatch(/programs: 4 accepted of \d+ candidates/);
    expect(text).toMatch(/call depth \(f = 1/);
    expect(fs.readFileSync(a)).toEqual(fs.readFileSync(b));
    expect(fs.existsSync(`${a}.partial`)).toBe(false);
    const summary = JSON.parse(fs.readFileSync(`${a}.summary.json`, 'utf8'));
    expect(summary.accepted).toBe(4);
    expect(summary.config.generator.nesting).toBe(2);
  });

  test('split writes three files that partition the input by program', async () => {
    const dir = path.join(tmp, 'split');
    const text = await cli('programs', 'split', '--in', fx('cruxeval_sample.jsonl'), '--out-dir', dir, '--fractions', '0.5,0.25,0.25');
    expect(text).toMatch(/train: \d+ programs/);
    const ids = ['train', 'validation', 'test'].flatMap((s) =>
      fs.readFileSync(path.join(dir, `${s}.jsonl`), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).id as string),
    );
    expect(ids.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `sample_${i}`).sort());
  });

  test('decontaminate counts matches and writes the clean records', async () => {
    const out = path.join(tmp, 'clean.jsonl');
    const text = await cli('programs', 'decontaminate', '--in', fx('cruxeval_sample.jsonl'), '--against', fx('cruxeval_sample.jsonl'), '--out', out);
    expect(text).toMatch(/^20 of 20 programs \(20 records\) match/);
    expect(fs.readFileSync(out, 'utf8')).toBe('');
  });

  test('stats traces a .py directory with entry calls', async () => {
    const text = await cli('programs', 'stats', '--in', fx('pydir'), '--calls', fx('calls.json'), '--raw', '--quiet');
    const s = JSON.parse(text);
    expect(s.records).toBe(4);
    expect(s.status).toEqual({ normal: 4 });
    expect(s.events.min).toBe(3); // double(21): call, line, return
    expect(s.maxDepth.max).toBe(1);
  });

  test('pydocs writes {id, text} documents', async () => {
    const out = path.join(tmp, 'docs.jsonl');
    await cli('programs', 'pydocs', '--dir', fx('pydir'), '--out', out);
    const docs = fs.readFileSync(out, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    expect(docs.map((d) => d.id)).toEqual(['add.py', 'sub/helper.py', 'text.py']);
  });
});

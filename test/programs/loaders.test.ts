import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadCruxEvalJsonl, loadPyDirectory, parseCall, pySourceDocuments, readTextJsonl } from '../../src/programs/loaders';
import { UserError } from '../../src/util/errors';

const fx = (name: string) => path.join(__dirname, '../fixtures/programs', name);

async function errorOf(p: Promise<unknown>): Promise<UserError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return e as UserError;
  }
  throw new Error('expected a UserError');
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('CruxEval-format JSONL', () => {
  test('loads records with their fields', async () => {
    const recs = await loadCruxEvalJsonl(fx('cruxeval_sample.jsonl'));
    expect(recs).toHaveLength(20);
    expect(recs[0]).toMatchObject({ id: 'sample_0', input: '[1, 1, 3, 1, 3, 1]', output: '[(4, 1), (4, 1), (4, 1), (4, 1), (2, 3), (2, 3)]' });
    expect(recs[0].code.startsWith('def f(nums):')).toBe(true);
  });

  test('reports every malformed line with its number and field', async () => {
    const e = await errorOf(loadCruxEvalJsonl(fx('cruxeval_bad.jsonl')));
    expect(e.message).toContain('cruxeval_bad.jsonl: 4 malformed records');
    expect(e.message).toContain('line 2: invalid JSON');
    expect(e.message).toContain('line 3: field "code" must be a non-empty string');
    expect(e.message).toContain('line 4: duplicate id "ok_1" (first on line 1)');
    expect(e.message).toContain('line 5: field "entry" must be a Python identifier');
    expect(e.message).not.toContain('line 1:');
  });

  test('a lone surrogate in code or input is a malformed record; escaped inside a literal it loads', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-surrogate-'));
    const file = path.join(dir, 'p.jsonl');
    const lines = [
      { id: 'raw', code: 'def f(s):\n    return s', input: "'a \udbff'" },
      { id: 'escaped', code: 'def f(s):\n    return s', input: "'a \\udbff'" },
    ];
    fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    expect(fs.readFileSync(file, 'utf8')).toContain('\\udbff');
    const e = await errorOf(loadCruxEvalJsonl(file));
    expect(e.message).toContain('p.jsonl:1: field "input" holds a lone surrogate');
    fs.writeFileSync(file, JSON.stringify(lines[1]) + '\n');
    expect((await loadCruxEvalJsonl(file))[0].input).toBe("'a \\udbff'");
  });

  test('a missing file is a UserError naming it', async () => {
    const e = await errorOf(loadCruxEvalJsonl(fx('nope.jsonl')));
    expect(e.message).toMatch(/nope\.jsonl does not exist/);
  });
});

describe('directory of .py files with entry calls', () => {
  test('JSON list: call or entry+input, default and explicit ids', async () => {
    const recs = await loadPyDirectory(fx('pydir'), fx('calls.json'));
    expect(recs.map((r) => [r.id, r.entry ?? 'f', r.input])).toEqual([
      ['add-0', 'add', '2, 3'],
      ['add-1', 'add', '-1, 1'],
      ['text-0', 'f', "'a1b2'"],
      ['double-21', 'double', '21'],
    ]);
    expect(recs[0].code).toContain('total = a + b');
  });

  test('JSONL list', async () => {
    const recs = await loadPyDirectory(fx('pydir'), fx('calls.jsonl'));
    expect(recs.map((r) => r.id)).toEqual(['add-0', 'text-0']);
  });

  test('bad entries are all reported with their line', async () => {
    const e = await errorOf(loadPyDirectory(fx('pydir'), fx('calls_bad.jsonl')));
    expect(e.message).toContain('line 1: field "call" must look like name(args)');
    expect(e.message).toContain('line 2:');
    expect(e.message).toContain('missing.py does not exist');
    expect(e.message).toContain('line 3: file "../escape.py" is outside');
    expect(e.message).toContain('line 4: needs "call"');
  });

  test('parseCall', () => {
    expect(parseCall('g(1, [2, 3])')).toEqual({ entry: 'g', input: '1, [2, 3]' });
    expect(parseCall('not a call')).toBeUndefined();
  });
});

describe('text corpora', () => {
  test('JSONL {text}: ids default to file:line', async () => {
    const docs = await collect(readTextJsonl(fx('text.jsonl')));
    expect(docs).toEqual([
      { id: 'text.jsonl:1', text: 'hello world' },
      { id: 'doc2', text: 'second document' },
    ]);
  });

  test('JSONL {text}: a bad line is named', async () => {
    const e = await errorOf(collect(readTextJsonl(fx('text_bad.jsonl'))));
    expect(e.message).toMatch(/text_bad\.jsonl:2: field "text" must be a string/);
  });

  test('.py directory walk: sorted relative paths, .py only', () => {
    const docs = [...pySourceDocuments(fx('pydir'))];
    expect(docs.map((d) => d.id)).toEqual(['add.py', 'sub/helper.py', 'text.py']);
    expect(docs[1].text).toContain('def double');
  });
});

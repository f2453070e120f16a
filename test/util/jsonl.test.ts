import * as fs from 'fs';
import * as path from 'path';
import { AtomicJsonlWriter, JsonlWriter, readJsonl, readJsonlSync, setSkipInvalid, skippedLines } from '../../src/util/jsonl';
import { tempDir } from '../helpers/tmp';

describe('jsonl', () => {
  const dir = tempDir('jsonl');

  it('a malformed line is an error naming file:line; --skip-invalid skips and counts it; yield mode hands it over', async () => {
    const file = path.join(dir, 'in.jsonl');
    fs.writeFileSync(file, '{"a":1}\n\n{bad\n{"a":2}\n');
    const read = async (opts?: { invalid: 'yield' }) => {
      const seen: Array<{ lineNumber: number; ok: boolean }> = [];
      for await (const line of readJsonl<{ a: number }>(file, opts)) seen.push({ lineNumber: line.lineNumber, ok: !line.error });
      return seen;
    };
    await expect(read()).rejects.toThrow(`${file}:3: invalid JSON`);
    await expect(read()).rejects.toThrow(/--skip-invalid/);
    setSkipInvalid(true);
    try {
      expect(await read()).toEqual([
        { lineNumber: 1, ok: true },
        { lineNumber: 4, ok: true },
      ]);
      expect(skippedLines().count).toBe(1);
      expect(skippedLines().examples[0]).toMatch(`${file}:3: invalid JSON`);
    } finally {
      setSkipInvalid(false);
    }
    expect(await read({ invalid: 'yield' })).toEqual([
      { lineNumber: 1, ok: true },
      { lineNumber: 3, ok: false },
      { lineNumber: 4, ok: true },
    ]);
    expect(() => readJsonlSync(file)).toThrow(`${file}:3: invalid JSON`);
  });

  it('an atomic writer leaves nothing under the name until commit, and nothing at all after abort', () => {
    const file = path.join(dir, 'atomic.jsonl');
    const w = new AtomicJsonlWriter(file);
    w.write({ a: 1 });
    expect(fs.existsSync(file)).toBe(false);
    w.commit();
    expect(readJsonlSync(file)).toEqual([{ a: 1 }]);
    const w2 = new AtomicJsonlWriter(path.join(dir, 'aborted.jsonl'));
    w2.write({ a: 2 });
    w2.abort();
    expect(fs.readdirSync(dir).filter((f) => f.includes('aborted'))).toEqual([]);
  });

  it('appends without losing earlier records', () => {
    const file = path.join(dir, 'out.jsonl');
    const w1 = new JsonlWriter(file);
    w1.write({ id: 1 });
    w1.close();
    const w2 = new JsonlWriter(file);
    w2.write({ id: 2 });
    w2.close();
    expect(readJsonlSync(file)).toEqual([{ id: 1 }, { id: 2 }]);
  });
});

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { JsonlWriter, readJsonl, readJsonlSync } from '../../src/util/jsonl';

describe('jsonl', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-jsonl-'));

  it('streams records and reports malformed lines with their line number instead of throwing', async () => {
    const file = path.join(dir, 'in.jsonl');
    fs.writeFileSync(file, '{"a":1}\n\n{bad\n{"a":2}\n');
    const seen: Array<{ lineNumber: number; ok: boolean }> = [];
    for await (const line of readJsonl<{ a: number }>(file)) seen.push({ lineNumber: line.lineNumber, ok: !line.error });
    expect(seen).toEqual([
      { lineNumber: 1, ok: true },
      { lineNumber: 3, ok: false },
      { lineNumber: 4, ok: true },
    ]);
    expect(() => readJsonlSync(file)).toThrow(`${file}:3: invalid JSON`);
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

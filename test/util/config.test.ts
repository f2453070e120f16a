import * as fs from 'fs';
import * as path from 'path';
import { z } from 'zod';
import { loadConfig, parseOverride } from '../../src/util/config';
import { UserError } from '../../src/util/errors';
import { tempDir } from '../helpers/tmp';

const schema = z
  .object({
    name: z.string(),
    train: z.object({ steps: z.number().int().positive(), lr: z.number().default(1e-3) }).strict(),
  })
  .strict();

function writeTemp(content: string): string {
  const file = path.join(tempDir('config'), 'c.json');
  fs.writeFileSync(file, content);
  return file;
}

describe('loadConfig', () => {
  it('reads a file, applies --set overrides parsed as JSON, fills defaults', () => {
    const file = writeTemp(JSON.stringify({ name: 'tiny', train: { steps: 10 } }));
    const cfg = loadConfig(schema, { file, overrides: ['train.steps=25', 'name=other'] });
    expect(cfg).toEqual({ name: 'other', train: { steps: 25, lr: 1e-3 } });
  });

  it('names the file and every bad field in one error', () => {
    const file = writeTemp(JSON.stringify({ name: 3, train: { steps: -1, typo: 1 } }));
    let error: unknown;
    try {
      loadConfig(schema, { file });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    const message = (error as Error).message;
    expect(message).toContain(file);
    expect(message).toMatch(/name:/);
    expect(message).toMatch(/train\.steps:/);
    expect(message).toMatch(/typo/);
  });

  it('rejects malformed JSON and malformed overrides clearly', () => {
    const file = writeTemp('{"name": ');
    expect(() => loadConfig(schema, { file })).toThrow(new RegExp(`invalid JSON in config ${file.replace(/[/\\.]/g, '\\$&')}`));
    expect(() => parseOverride('nonsense')).toThrow(/expected FIELD=VALUE/);
    expect(() => loadConfig(schema, { file: '/nonexistent/x.json' })).toThrow(/cannot read config \/nonexistent\/x.json/);
  });
});

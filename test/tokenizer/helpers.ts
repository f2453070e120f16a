import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { SPECIAL_TOKENS } from '../../src/ndl/tokens';
import { spmSettingsSchema } from '../../src/tokenizer/config';
import { escapeForSpm } from '../../src/tokenizer/escape';
import { chunkForTraining } from '../../src/tokenizer/evaluate';
import { spmTrainArgs } from '../../src/tokenizer/spm';

export const FIXTURES = path.join(__dirname, '..', 'fixtures', 'tokenizer');
export const SHIPPED_MODEL = path.join(__dirname, '..', '..', 'tokenizer', 'ndbg-8k.model');

/** The NDL documents of the fixtures (reference documents + bootstrap documents). */
export function fixtureDocs(): string[] {
  return fs
    .readFileSync(path.join(FIXTURES, 'ndl-docs.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => (JSON.parse(l) as { text: string }).text);
}

export function fixtureCode(): string[] {
  const dir = path.join(FIXTURES, 'code');
  return [
    ...fs.readdirSync(dir).sort().map((f) => fs.readFileSync(path.join(dir, f), 'utf8')),
    fs.readFileSync(path.join(FIXTURES, 'tricky.py'), 'utf8'),
  ];
}

/**
 * Trains a tiny model (vocab 640, the fixture texts, about a second) with ndbg's own spm_train
 * flags, optionally with other special tokens or extra flags appended (later flags win).
 */
export function trainTiny(dir: string, name: string, opts: { specialTokens?: readonly string[]; extraArgs?: string[] } = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  const input = path.join(dir, `${name}.txt`);
  // A small slice keeps spm_train near a second; the round-trip test below still uses every fixture.
  const text = [...fixtureDocs().slice(0, 8), ...fixtureCode().slice(-2)].flatMap((t) => chunkForTraining(escapeForSpm(t), 1024)).join('\n');
  fs.writeFileSync(input, text + '\n');
  const symbols = path.join(dir, `${name}.symbols`);
  fs.writeFileSync(symbols, (opts.specialTokens ?? SPECIAL_TOKENS).join('\n') + '\n');
  const prefix = path.join(dir, name);
  const args = spmTrainArgs(
    {
      cwd: dir,
      input,
      modelPrefix: prefix,
      vocabSize: 640,
      settings: spmSettingsSchema.parse({}),
      seed: 1,
      threads: 1,
      maxSentenceBytes: 8192,
    },
    symbols,
  );
  const r = spawnSync('spm_train', [...args, ...(opts.extraArgs ?? [])], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`spm_train failed: ${r.stderr}`);
  return `${prefix}.model`;
}

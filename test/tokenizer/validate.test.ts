import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SPECIAL_TOKENS } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';
import { UserError } from '../../src/util/errors';
import { fixtureCode, fixtureDocs, trainTiny } from './helpers';

// Tiny models trained with spm_train in this test (about a second each): one right, and
// several that break one rule each. Load must accept the first and reject the others with
// one clear message naming the file.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-tok-validate-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function loadError(model: string): Promise<Error> {
  try {
    await Tokenizer.load(model);
  } catch (e) {
    return e as Error;
  }
  throw new Error(`expected ${model} to be rejected`);
}

test('a model trained with the spec tokens loads and round-trips', async () => {
  const model = trainTiny(dir, 'good');
  const tok = await Tokenizer.load(model);
  expect(tok.vocabSize).toBe(640);
  SPECIAL_TOKENS.forEach((t, i) => expect(tok.idOf(t)).toBe(i + 1)); // ids 1..N, 0 is <unk>
  for (const text of [...fixtureDocs(), ...fixtureCode()]) expect(tok.decode(tok.encode(text))).toBe(text);
});

test('a model missing a special token is rejected, naming the file and the token', async () => {
  const model = trainTiny(dir, 'missing', { specialTokens: SPECIAL_TOKENS.filter((t) => t !== '<|frame_sep|>') });
  const e = await loadError(model);
  expect(e).toBeInstanceOf(UserError);
  expect(e.message).toContain(model);
  expect(e.message).toContain('missing special tokens: <|frame_sep|>');
});

test('a model with an extra or reordered user-defined symbol is rejected', async () => {
  const extra = trainTiny(dir, 'extra', { specialTokens: [...SPECIAL_TOKENS, '<|bogus|>'] });
  expect((await loadError(extra)).message).toContain('not in src/ndl/tokens.ts: <|bogus|>');
  const swapped = [...SPECIAL_TOKENS];
  [swapped[0], swapped[1]] = [swapped[1], swapped[0]];
  const reordered = trainTiny(dir, 'reordered', { specialTokens: swapped });
  expect((await loadError(reordered)).message).toContain('not in the order of SPECIAL_TOKENS');
});

test('a model whose normalizer changes text is rejected', async () => {
  const model = trainTiny(dir, 'nfkc', { extraArgs: ['--normalization_rule_name=nmt_nfkc', '--remove_extra_whitespaces=true'] });
  const msg = (await loadError(model)).message;
  expect(msg).toContain('normalizer is "nmt_nfkc"');
  expect(msg).toContain('remove_extra_whitespaces is on');
});

test('a model without byte fallback is rejected', async () => {
  const model = trainTiny(dir, 'nobytes', { extraArgs: ['--byte_fallback=false'] });
  expect((await loadError(model)).message).toContain('byte fallback is off');
});

test('a missing or corrupt file is a clear error', async () => {
  const missing = path.join(dir, 'nope.model');
  expect((await loadError(missing)).message).toContain(`cannot read tokenizer ${missing}`);
  const corrupt = path.join(dir, 'corrupt.model');
  fs.writeFileSync(corrupt, Buffer.from('this is not a protobuf \xff\xff\xff\xff'));
  const e = await loadError(corrupt);
  expect(e).toBeInstanceOf(UserError);
  expect(e.message).toContain(corrupt);
});

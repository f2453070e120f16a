import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SPECIAL_TOKENS } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';
import { tokenizerTrainConfigSchema } from '../../src/tokenizer/config';
import { readManifest } from '../../src/tokenizer/manifest';
import { sampleSource } from '../../src/tokenizer/sources';
import { runSpmTrain } from '../../src/tokenizer/spm';
import { trainTokenizer } from '../../src/tokenizer/train';
import { loadConfig } from '../../src/util/config';
import { UserError } from '../../src/util/errors';
import { FIXTURES, fixtureDocs } from './helpers';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-tok-train-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function tinyConfig(outDir: string, extra: Record<string, unknown> = {}) {
  return tokenizerTrainConfigSchema.parse({
    name: 'tiny',
    outDir,
    seed: 3,
    vocabSize: 640,
    heldOutFraction: 0.2,
    sources: [
      { kind: 'ndl', name: 'docs', path: path.join(FIXTURES, 'ndl-docs.jsonl'), maxBytes: 60_000 },
      { kind: 'python', name: 'code', paths: [path.join(FIXTURES, 'code')], maxBytes: 40_000 },
    ],
    alternatives: [{ name: 'ws-split', spm: { splitByWhitespace: true } }],
    ...extra,
  });
}

describe('ndbg tokenizer train', () => {
  test('writes model, vocab, manifest and the alternative; the same seed gives the same bytes', async () => {
    const logs: string[] = [];
    const a = await trainTokenizer(tinyConfig(path.join(dir, 'a')), { log: (l) => logs.push(l) });
    const b = await trainTokenizer(tinyConfig(path.join(dir, 'b')), { log: () => undefined });
    const m = a.manifest;
    expect(fs.readFileSync(a.modelPath)).toEqual(fs.readFileSync(b.modelPath));
    const mb = readManifest(b.manifestPath);
    expect({ ...mb, config: { ...mb.config, outDir: 'x' } }).toEqual({ ...a.manifest, config: { ...a.manifest.config, outDir: 'x' } });

    expect(readManifest(a.manifestPath)).toEqual(m);
    expect(m.vocabSize).toBe(640);
    expect(Object.keys(m.specialTokens)).toEqual([...SPECIAL_TOKENS]);
    expect(fs.existsSync(path.join(dir, 'a', 'tiny.vocab'))).toBe(true);
    expect(fs.existsSync(path.join(dir, 'a', 'alternatives', 'tiny.ws-split.model'))).toBe(true);
    expect(m.spmTrain.args).toContain('--normalization_rule_name=identity');
    expect(m.spmTrain.args).toContain('--split_by_whitespace=false');

    // Both sources contributed, within budget, and held-out documents were kept apart.
    const [docs, code] = m.training.sources;
    expect(docs.trainBytes).toBeGreaterThan(0);
    expect(docs.trainBytes).toBeLessThanOrEqual(60_000);
    expect(code.trainBytes).toBeLessThanOrEqual(40_000);
    expect(docs.heldOutDocs + code.heldOutDocs).toBeGreaterThan(0);

    // The comparison covers both variants on the held-out roles, with exact round trips.
    expect(m.comparison.map((c) => c.variant)).toEqual(['shipped', 'ws-split']);
    for (const c of m.comparison) {
      for (const r of Object.values(c.heldOut)) {
        expect(r.exactRoundTrips).toBe(r.docs);
        expect(r.bytesPerToken).toBeGreaterThan(1);
      }
    }
    expect(logs.some((l) => l.includes('shipped: trained'))).toBe(true);

    const tok = await Tokenizer.load(a.modelPath);
    expect(tok.sha256).toBe(m.sha256);
    for (const d of fixtureDocs()) expect(tok.decode(tok.encode(d))).toBe(d);
  });

  test('newlinePiece: a source line has the same ids in the program context as in a frame SRC', async () => {
    const a = await trainTokenizer(tinyConfig(path.join(dir, 'nl'), { spm: { newlinePiece: true } }), { log: () => undefined });
    expect(a.manifest.config.spm.newlinePiece).toBe(true);
    const tok = await Tokenizer.load(a.modelPath);
    const newline = tok.encode('\n');
    expect(newline).toEqual([SPECIAL_TOKENS.length + 1]);
    const lines = ['def group(names, label):', '    for letter in names:', "        return {'b': 30, 'c': [1, 2]}"];
    // In the context every line ends with a newline; in SRC it does not. The ids must agree.
    expect(tok.encode(lines.join('\n') + '\n')).toEqual(lines.flatMap((l) => [...tok.encode(l), ...newline]));
    for (const d of fixtureDocs()) expect(tok.decode(tok.encode(d))).toBe(d);
    // Without it (the default), pieces cross the line end, e.g. `):` + newline as one piece.
    const plain = await Tokenizer.load(path.join(dir, 'a', 'tiny.model'));
    expect(plain.encode(lines.join('\n') + '\n')).not.toEqual(lines.flatMap((l) => [...plain.encode(l), ...plain.encode('\n')]));
  });

  test('a missing spm_train is a clear error with install instructions', () => {
    expect(() =>
      runSpmTrain({
        cwd: dir,
        input: 'none.txt',
        modelPrefix: path.join(dir, 'x', 'none'),
        vocabSize: 640,
        settings: tinyConfig(dir).spm,
        seed: 0,
        threads: 1,
        maxSentenceBytes: 1024,
        bin: 'spm_train_not_installed_here',
      }),
    ).toThrow(/spm_train .*not found.*apt-get install sentencepiece/);
  });

  test('config errors name every bad field', () => {
    const file = path.join(dir, 'bad.json');
    fs.writeFileSync(file, JSON.stringify({ name: 'x y', vocabSize: 10, sources: [{ kind: 'python', maxBytes: 5 }], typo: 1 }));
    let msg = '';
    try {
      loadConfig(tokenizerTrainConfigSchema, { file, overrides: ['spm.modelType=wordpiece'] });
    } catch (e) {
      expect(e).toBeInstanceOf(UserError);
      msg = (e as Error).message;
    }
    for (const field of ['name', 'vocabSize', 'sources.0.paths', 'spm.modelType', 'typo']) expect(msg).toContain(field);
  });
});

describe('the seeded sampler', () => {
  const opts = { seed: 11, heldOutFraction: 0.3, heldOutMaxBytes: 1e9, cwd: FIXTURES };

  test('is deterministic, keeps held-out documents apart and respects the byte budget', async () => {
    const src = { kind: 'ndl' as const, path: 'ndl-docs.jsonl', field: 'text', maxBytes: 80_000 };
    const a = await sampleSource(src, 0, opts);
    const b = await sampleSource(src, 0, opts);
    expect(a.train).toEqual(b.train);
    expect(a.heldOut).toEqual(b.heldOut);
    expect(a.trainBytes).toBeLessThanOrEqual(80_000);
    expect(a.heldOut.length).toBeGreaterThan(0);
    const train = new Set(a.train);
    expect(a.heldOut.some((d) => train.has(d))).toBe(false);
    const c = await sampleSource(src, 0, { ...opts, seed: 12 });
    expect(c.train).not.toEqual(a.train);
  });

  test('malformed JSONL and missing fields are errors naming file and line', async () => {
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(bad, '{"text": "ok"}\n{"text": \n');
    await expect(sampleSource({ kind: 'jsonl', path: bad, field: 'text', maxBytes: 10 }, 0, opts)).rejects.toThrow(`${bad}:2`);
    fs.writeFileSync(bad, '{"text": "ok"}\n{"body": "x"}\n');
    await expect(sampleSource({ kind: 'jsonl', path: bad, field: 'text', maxBytes: 10 }, 0, opts)).rejects.toThrow(
      `${bad}:2: field "text" is missing`,
    );
  });
});

import * as fs from 'fs';
import * as path from 'path';
import { Tokenizer } from '../../src/tokenizer';
import { MixtureLoader } from '../../src/data/loader';
import { buildFrom, FIXTURES, tmpDir } from './helpers';

/** The data stage with the project's real tokenizer (a tiny fixture model), on worker threads. */
describe('data build with the sentencepiece tokenizer', () => {
  const model = path.join(FIXTURES, 'spm-tiny.model');
  const sources = [`traces=${path.join(FIXTURES, 'ndl.jsonl')}:ndl`, `code=${path.join(FIXTURES, 'code')}`];

  it('packs NDL documents losslessly, identically with 0 or 2 workers, and masks the context', async () => {
    const dir = tmpDir('spm');
    const tok = await Tokenizer.load(model);
    // NDL as a stream here (rows of 65 tokens are shorter than these documents; whole-document packing is tested in build.test.ts).
    const opts = { tokenizer: model, seqLen: 64, valFraction: 0, maskContext: true, shardMb: 1, wholeDocumentKinds: [] as const };
    const m0 = await buildFrom(path.join(dir, 'w0'), sources, { ...opts, workers: 0 });
    const m2 = await buildFrom(path.join(dir, 'w2'), sources, { ...opts, workers: 2 });
    expect(m2).toEqual(m0);
    for (const s of m0.sources) {
      for (const sh of s.train.shards) {
        expect(fs.readFileSync(path.join(dir, 'w2', sh.file)).equals(fs.readFileSync(path.join(dir, 'w0', sh.file)))).toBe(true);
      }
    }
    expect(m0.tokenizer.sha256).toBe(tok.sha256);
    expect(m0.tokenizer.vocabSize).toBe(tok.vocabSize);
    expect(m0.sources[0].train.shards).toHaveLength(1);

    // Read the traces rows in stored order (one shard, shuffle window 1) and rebuild the text.
    const loader = new MixtureLoader({ datasets: [path.join(dir, 'w0')], weights: { traces: 1 }, batchSize: 1, seed: 0, shuffleWindow: 1, tokenizerSha256: tok.sha256 });
    const rows = m0.sources[0].train.rows;
    const ids: number[] = [];
    const targets: number[] = [];
    for (let r = 0; r < rows; r++) {
      const b = loader.next();
      for (let i = r === 0 ? 0 : 1; i < b.seqLen + 1; i++) {
        if (b.docIds[i] < 0) continue;
        ids.push(b.ids[i]);
        if (b.lossMask[i]) targets.push(b.ids[i]);
      }
    }
    const want = fs.readFileSync(path.join(FIXTURES, 'ndl.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).text as string).join('');
    expect(tok.decode(ids)).toBe(want);
    const learned = tok.decode(targets);
    expect(learned.startsWith('<|frame_sep|><|call_sep|><|src_sep|>def main():')).toBe(true);
    expect(learned).not.toContain('n += int(c == t)\n'); // only in the (masked) contexts as a full line
  });
});

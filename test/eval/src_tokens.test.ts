import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { readNdlTexts, srcTokenAccuracy } from '../../src/eval/src_tokens';
import type { NextTokenLogProbs } from '../../src/eval/copy_probe';
import { STRUCTURE_TOKENS } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';
import { UserError } from '../../src/util/errors';

const ROOT = path.resolve(__dirname, '..', '..');

// A forward document in the spec's layout (ndl.md §2): two SRC spans closed by <|arg_sep|>
// (call frames), one closed by <|action_sep|> (a line frame), one return frame.
const DOC =
  '<|begin_of_text|><|trace_context_start|>def inc(x):\n    return x + 1\n\ndef main():\n    return inc(41)\n' +
  '<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|>' +
  '<|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return inc(41)<|action_sep|><|step_into|>' +
  '<|frame_sep|><|call_sep|><|src_sep|>def inc(x):<|arg_sep|>{"x": "41"}<|action_sep|><|step_return|>' +
  '<|frame_sep|><|return_sep|><|src_sep|>    return x + 1<|arg_sep|>"42"<|action_sep|><|step_over|>' +
  '<|frame_sep|><|exit_normal|><|trace_end|><|end_of_text|>';

describe('SRC token accuracy (teacher-forced)', () => {
  let tok: Tokenizer;
  let ids: Int32Array;
  let V: number;
  beforeAll(async () => {
    tok = await Tokenizer.load(path.join(ROOT, 'tokenizer', 'ndbg-2k.model'));
    ids = Int32Array.from(tok.encode(DOC));
    V = tok.vocabSize;
  });

  /** Puts all mass on `pick(t)` at each position t (the token it predicts for t + 1). */
  const predictor =
    (pick: (doc: Int32Array, t: number) => number): NextTokenLogProbs =>
    (doc) =>
      Array.from(doc, (_, t) => {
        const row = new Float32Array(V).fill(-1e9);
        row[pick(doc, t)] = 0;
        return row;
      });

  test('an oracle scores 100% on every span; a predictor wrong at each span start scores 0% there and on whole spans only', () => {
    const oracle = srcTokenAccuracy(predictor((_, t) => ids[t + 1] ?? 0), tok, [DOC], { seqLen: 512 });
    expect(oracle).toMatchObject({ documents: 1, tooLong: 0, spans: 4, firstToken: 1, restTokens: 1, spanExact: 1 });

    const src = tok.idOf(STRUCTURE_TOKENS.srcSep);
    const wrong = (t: number) => (ids[t + 1] === 5 ? 6 : 5);
    const lostAtStart = srcTokenAccuracy(predictor((doc, t) => (doc[t] === src ? wrong(t) : ids[t + 1] ?? 0)), tok, [DOC], { seqLen: 512 });
    expect(lostAtStart).toMatchObject({ spans: 4, firstToken: 0, restTokens: 1, spanExact: 0 });
  });

  test('one wrong token inside a span costs that span, not the others; tokens outside spans do not count', () => {
    // Wrong on the closing <|action_sep|> of the line frame's span, and everywhere outside spans.
    const actionSep = tok.idOf(STRUCTURE_TOKENS.actionSep);
    const lineSpanEnd = ids.indexOf(actionSep, ids.indexOf(tok.idOf('<|line_sep|>'))) - 1;
    const inSpan = new Set<number>();
    for (let t = ids.indexOf(tok.idOf(STRUCTURE_TOKENS.frameSep)); t < ids.length; t++) {
      if (ids[t] !== tok.idOf(STRUCTURE_TOKENS.srcSep)) continue;
      for (let u = t; u + 1 < ids.length; u++) {
        inSpan.add(u);
        if (ids[u + 1] === actionSep || ids[u + 1] === tok.idOf(STRUCTURE_TOKENS.argSep)) break;
      }
    }
    const r = srcTokenAccuracy(predictor((_, t) => (t === lineSpanEnd || !inSpan.has(t) ? (ids[t + 1] === 5 ? 6 : 5) : ids[t + 1])), tok, [DOC], { seqLen: 512 });
    expect(r.spans).toBe(4);
    expect(r.spanExact).toBe(0.75);
    expect(r.firstToken).toBe(1);
    expect(r.restTokens).toBeLessThan(1);
    expect(r.restTokens).toBeGreaterThan(0.9);
  });

  test('documents longer than a training row are counted, not cut; a row of max_seq_len + 1 tokens is scored', () => {
    const oracle = predictor((_, t) => ids[t + 1] ?? 0);
    expect(srcTokenAccuracy(oracle, tok, [DOC], { seqLen: ids.length - 2 })).toMatchObject({ documents: 0, tooLong: 1, spans: 0 });
    expect(srcTokenAccuracy(oracle, tok, [DOC], { seqLen: ids.length - 1 })).toMatchObject({ documents: 1, tooLong: 0, spans: 4, spanExact: 1 });
  });

  test('reads documents from NDL JSONL; a line without text is an error naming file:line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-src-'));
    const good = path.join(dir, 'docs.jsonl');
    fs.writeFileSync(good, [JSON.stringify({ id: 'a', text: DOC }), JSON.stringify({ id: 'b', text: DOC }), ''].join('\n'));
    expect(await readNdlTexts(good, 1)).toEqual([DOC]);
    const bad = path.join(dir, 'bad.jsonl');
    fs.writeFileSync(bad, JSON.stringify({ id: 'a', text: DOC }) + '\n' + JSON.stringify({ id: 'b' }) + '\n');
    await expect(readNdlTexts(bad, 10)).rejects.toThrow(UserError);
    await expect(readNdlTexts(bad, 10)).rejects.toThrow(`${bad}:2: field "text"`);
    await expect(readNdlTexts(path.join(dir, 'none.jsonl'), 10)).rejects.toThrow('no such file');
  });
});

import * as path from 'path';
import { initBackend } from '../../src/backend/backend';
import { generate } from '../../src/model/generate';
import { LlamaModel } from '../../src/model/model';
import { resolveModelConfig } from '../../src/model/config';
import { promptContext, SrcConstraint } from '../../src/eval/src_constraint';
import { ModelCompleter } from '../../src/eval/model_completer';
import { STRUCTURE_TOKENS } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';

const ROOT = path.resolve(__dirname, '..', '..');
const PROGRAM = 'def inc(x):\n    y = x + 1\n    return y\n\ndef main():\n    return inc(41)\n';
const PROMPT =
  `<|begin_of_text|><|trace_context_start|>${PROGRAM}` +
  '<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|>';
const LINES = ['def inc(x):', '    y = x + 1', '    return y', 'def main():', '    return inc(41)'];

describe('constrained SRC decoding', () => {
  let tok: Tokenizer;
  let srcSep: number;
  let closers: number[];
  beforeAll(async () => {
    tok = await Tokenizer.load(path.join(ROOT, 'tokenizer', 'ndbg-2k.model'));
    srcSep = tok.idOf(STRUCTURE_TOKENS.srcSep);
    closers = [tok.idOf(STRUCTURE_TOKENS.argSep), tok.idOf(STRUCTURE_TOKENS.actionSep)];
  });

  test('the prompt context is the program; outside a SRC field nothing is constrained', () => {
    expect(promptContext(PROMPT)).toBe(PROGRAM);
    expect(promptContext('no context here')).toBeUndefined();
    expect(promptContext(`<|begin_of_text|><|trace_context_start|>${PROGRAM}`)).toBe(PROGRAM);
    expect(SrcConstraint.forPrompt(tok, 'no context here')).toBeUndefined();
    const c = SrcConstraint.forPrompt(tok, PROMPT)!;
    expect(c.allowed([])).toBeUndefined();
    expect(c.allowed([tok.idOf('<|line_sep|>'), tok.idOf(STRUCTURE_TOKENS.argSep)])).toBeUndefined();
  });

  test('inside a SRC field only tokens that keep it a prefix of a program line, and a closer exactly where a line ends', () => {
    const c = SrcConstraint.forPrompt(tok, PROMPT)!;
    const bytesOf = (ids: number[]) => Buffer.from(tok.decode(ids), 'utf8');
    const lines = LINES.map((l) => Buffer.from(l, 'utf8'));
    const isPrefix = (b: Buffer) => lines.some((l) => l.length >= b.length && l.subarray(0, b.length).equals(b));
    const first = c.allowed([srcSep])!;
    for (const id of first) expect(isPrefix(bytesOf([id]))).toBe(true);
    // Every token that does keep a prefix is allowed: the check is exact both ways.
    for (let id = 0; id < tok.vocabSize; id++) if (!first.has(id) && tok.decode([id]) && !tok.decode([id]).includes('<|')) expect(isPrefix(bytesOf([id]))).toBe(false);
    for (const line of LINES) {
      const ids = tok.encode(line);
      for (let i = 0; i < ids.length; i++) {
        const a = c.allowed([srcSep, ...ids.slice(0, i)])!;
        expect(a.has(ids[i])).toBe(true);
        // A closer only where the text so far is a whole line.
        const endsHere = LINES.includes(tok.decode(ids.slice(0, i)));
        for (const cl of closers) expect(a.has(cl)).toBe(endsHere);
      }
      const atEnd = c.allowed([srcSep, ...ids])!;
      for (const cl of closers) expect(atEnd.has(cl)).toBe(true);
      // After the closer the field is over.
      expect(c.allowed([srcSep, ...ids, closers[1]])).toBeUndefined();
    }
    // A line the program does not have cannot be spelled.
    const invented = tok.encode('    return f(5)');
    let prefix = 0;
    while (c.allowed([srcSep, ...invented.slice(0, prefix)])?.has(invented[prefix])) prefix++;
    expect(prefix).toBeLessThan(invented.length);
  });

  test('after a breakpoint action the only line SRC may spell is its target', () => {
    const prompt = PROMPT.replace(/<\|step_into\|>$/, '<|breakpoint|>    return y<|frame_sep|>');
    const c = SrcConstraint.forPrompt(tok, prompt)!;
    const target = tok.encode('    return y');
    target.forEach((id, k) => {
      const written = [srcSep, ...target.slice(0, k)];
      const allowed = c.allowed(written)!;
      expect(allowed.has(id)).toBe(true);
      for (const a of allowed) expect('    return y'.startsWith(tok.decode([...written.slice(1), a]))).toBe(true);
    });
    expect(c.allowed([srcSep, ...target])).toEqual(new Set(closers));
    // Another line of the program, allowed after a step, is not after the breakpoint.
    const other = tok.encode('    y = x + 1');
    expect(SrcConstraint.forPrompt(tok, PROMPT)!.allowed([srcSep])!.has(other[0])).toBe(true);
    let accepted = 0;
    while (c.allowed([srcSep, ...other.slice(0, accepted)])?.has(other[accepted])) accepted++;
    expect(accepted).toBeLessThan(other.length);
  });

  test('any spelling of a line is accepted, byte-fallback pieces of non-ASCII text included', () => {
    const c = new SrcConstraint(tok, ['    return g(h(i()))', "    s = 'h\u00e9llo \u2603'"]);
    const head = tok.encode('    return g(h(i(');
    const [one, two] = [tok.idOf(')'), tok.idOf('))')];
    for (const tail of [[one, two], [two, one], [one, one, one]]) {
      const ids = [srcSep, ...head, ...tail];
      ids.slice(head.length + 1).forEach((id, k) => expect(c.allowed(ids.slice(0, head.length + 1 + k))!.has(id)).toBe(true));
      expect(c.allowed(ids)!.has(closers[1])).toBe(true);
    }
    const unicode = tok.encode("    s = 'h\u00e9llo \u2603'");
    expect(unicode.some((id) => /^<0x/.test(tok.pieceOf(id)))).toBe(true);
    unicode.forEach((id, k) => expect(c.allowed([srcSep, ...unicode.slice(0, k)])!.has(id)).toBe(true));
    expect(c.allowed([srcSep, ...unicode])!.has(closers[0])).toBe(true);
  });

  test('a random model, constrained, writes only program lines in its SRC fields; the completer turns it off on request', async () => {
    await initBackend('wasm', () => undefined);
    const model = LlamaModel.create(resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 32, n_layers: 1, n_heads: 2, d_ff: 48, max_seq_len: 256, init_std: 0.5 }), 3);
    const c = SrcConstraint.forPrompt(tok, PROMPT)!;
    const lineFrame = [tok.idOf(STRUCTURE_TOKENS.frameSep), tok.idOf('<|line_sep|>'), tok.idOf(STRUCTURE_TOKENS.argSep), ...tok.encode('{}'), srcSep];
    const promptIds = tok.encode(PROMPT);
    for (let seed = 0; seed < 5; seed++) {
      // Force a line frame's head, then let the constraint guide the SRC field.
      const r = generate(model, promptIds, {
        maxNewTokens: 40, temperature: 1, seed, stopTokens: [closers[1]],
        // Once the field is closed (by either closer), end the frame.
        allowedTokens: (g) => (g.length < lineFrame.length ? new Set([lineFrame[g.length]]) : c.allowed(g) ?? new Set([closers[1]])),
      });
      expect(r.stop).toBe('stop_token');
      const field = r.ids.slice(lineFrame.length);
      const close = field.findIndex((id) => closers.includes(id));
      expect(close).toBeGreaterThan(0);
      expect(LINES).toContain(tok.decode(field.slice(0, close)));
    }
    expect(new ModelCompleter(model, tok).constrainsSrc).toBe(true);
    expect(new ModelCompleter(model, tok, { maxNewTokens: 8, constrainSrc: false }).constrainsSrc).toBe(false);
    model.dispose();
  });
});

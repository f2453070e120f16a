import * as path from 'path';
import { initBackend } from '../../src/backend/backend';
import { FrameGrammar } from '../../src/eval/frame_grammar';
import { ModelCompleter } from '../../src/eval/model_completer';
import { resolveModelConfig } from '../../src/model/config';
import { LlamaModel } from '../../src/model/model';
import { parseNextFrame } from '../../src/ndl/parse';
import { EXIT_KINDS, exitToken, eventToken, FORWARD_EVENTS, INVERSE_EVENTS, STRUCTURE_TOKENS as S } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';

const ROOT = path.resolve(__dirname, '..', '..');
const PROGRAM = 'def inc(x):\n    y = x + 1\n    return y\n\ndef main():\n    return inc(41)\n';
const HEAD = `<|begin_of_text|><|trace_context_start|>${PROGRAM}`;
const MAIN_CALL = `${HEAD}<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|>`;
// A step_return from a call: program-flow decoding leaves it open (every forward event and exit).
const FORWARD = `${MAIN_CALL}<|step_return|>`;
const BREAKPOINT = `${MAIN_CALL}<|breakpoint|>    return y`;
// A step back from a call: program-flow decoding leaves it open (every inverse event and exit).
const INVERSE = `${HEAD}<|frame_sep|><|inv_call_sep|><|src_sep|>def inc(x):<|arg_sep|>{"x": "41"}<|action_sep|><|inv_step_into|>`;

/** True answers of each prompt: every event shape, LOCALS with the elision marker and escapes, VALUE as a string and null. */
const ANSWERS: Array<[string, string]> = [
  [FORWARD, '<|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return inc(41)<|action_sep|>'],
  [FORWARD, '<|frame_sep|><|call_sep|><|src_sep|>def inc(x):<|arg_sep|>{"x": "41"}<|action_sep|>'],
  [FORWARD, '<|frame_sep|><|line_sep|><|arg_sep|>{"..": "..", "y": "\'say \\"hi\\" \\u00e9\'"}<|src_sep|>    y = x + 1<|action_sep|>'],
  [FORWARD, '<|frame_sep|><|return_sep|><|src_sep|>    return y<|arg_sep|>"42"<|action_sep|>'],
  [FORWARD, '<|frame_sep|><|exception_sep|><|src_sep|>    y = x + 1<|arg_sep|>null<|action_sep|>'],
  [FORWARD, '<|frame_sep|><|exit_normal|>'],
  [BREAKPOINT, '<|frame_sep|><|line_sep|><|arg_sep|>{"x": "41", "y": "42"}<|src_sep|>    return y<|action_sep|>'],
  [BREAKPOINT, '<|frame_sep|><|exit_error|>'],
  [INVERSE, '<|frame_sep|><|inv_line_sep|><|src_sep|>    y = x + 1<|arg_sep|>{"x": "41"}<|action_sep|>'],
  [INVERSE, '<|frame_sep|><|inv_call_sep|><|src_sep|>def inc(x):<|arg_sep|>{"x": "41"}<|action_sep|>'],
  [INVERSE, '<|frame_sep|><|inv_exit_entry|>'],
];

describe('the frame grammar', () => {
  let tok: Tokenizer;
  const id = (t: string) => tok.idOf(t);
  beforeAll(async () => {
    tok = await Tokenizer.load(path.join(ROOT, 'tokenizer', 'ndbg-2k.model'));
  });

  test("an answer opens with <|frame_sep|>, then one of the direction's events or exits (after a breakpoint: a line or an exit)", () => {
    const first = (prompt: string) => FrameGrammar.forPrompt(tok, prompt, true)!.allowed([id(S.frameSep)]);
    expect(FrameGrammar.forPrompt(tok, FORWARD, true)!.allowed([])).toEqual(new Set([id(S.frameSep)]));
    const forwardExits = EXIT_KINDS.filter((k) => k !== 'inv_exit_entry').map((k) => id(exitToken(k)));
    expect(first(FORWARD)).toEqual(new Set([...FORWARD_EVENTS.map((e) => id(eventToken(e))), ...forwardExits]));
    expect(first(BREAKPOINT)).toEqual(new Set([id(eventToken('line')), ...forwardExits]));
    expect(first(INVERSE)).toEqual(new Set([...INVERSE_EVENTS.map((e) => id(eventToken(e))), id(exitToken('inv_exit_entry'))]));
    // No document to continue: no grammar.
    expect(FrameGrammar.forPrompt(tok, HEAD, true)).toBeUndefined();
    expect(FrameGrammar.forPrompt(tok, 'not NDL', true)).toBeUndefined();
  });

  test("where the program's text narrows the answer: the events and lines that can come next", () => {
    const ids = (text: string) => Array.from(tok.encode(text));
    const events = (...names: Parameters<typeof eventToken>[0][]) => names.map((e) => id(eventToken(e)));
    const forwardExits = EXIT_KINDS.filter((k) => k !== 'inv_exit_entry').map((k) => id(exitToken(k)));
    const RETURN = `${HEAD}<|frame_sep|><|inv_return_sep|><|src_sep|>    return y<|arg_sep|>"42"<|action_sep|>`;
    const back = (action: string) => `${RETURN}<|inv_step_over|><|frame_sep|><|inv_line_sep|><|src_sep|>    y = x + 1<|arg_sep|>{"x": "41"}<|action_sep|><|${action}|>`;
    for (const action of ['inv_step_into', 'inv_step_over']) {
      const g = FrameGrammar.forPrompt(tok, back(action), true)!;
      expect(g.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_call')));
      const head = ids('<|frame_sep|><|inv_call_sep|><|src_sep|>');
      const line = ids('def inc(x):');
      // The SRC can only spell the def line; then the model writes the arguments.
      expect(g.allowed(head)!.has(line[0])).toBe(true);
      expect(g.allowed(head)!.has(ids('    y = x + 1')[0])).toBe(false);
      expect(g.allowed([...head, ...line])).toEqual(new Set([id(S.argSep)]));
      // Without the SRC constraint only the event is decided.
      expect(FrameGrammar.forPrompt(tok, back(action), false)!.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_call')));
    }
    // Back from a return: its own line. Back from the second statement: the first, which calls nothing.
    const fromReturn = FrameGrammar.forPrompt(tok, `${RETURN}<|inv_step_into|>`, true)!;
    expect(fromReturn.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_line')));
    const inRet = ids('<|frame_sep|><|inv_line_sep|><|src_sep|>');
    expect([...fromReturn.allowed(inRet)!].every((a) => '    return y'.startsWith(tok.decode([a])))).toBe(true);
    const second = `${RETURN}<|inv_step_over|><|frame_sep|><|inv_line_sep|><|src_sep|>    return y<|arg_sep|>{"x": "41", "y": "42"}<|action_sep|><|inv_step_into|>`;
    const g = FrameGrammar.forPrompt(tok, second, true)!;
    expect(g.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_line')));
    expect(g.allowed(inRet)!.has(ids('    return y')[0])).toBe(false);
    // Forward over the first statement: the next line, or an exception there; no call, no return.
    const CALLED = `${HEAD}<|frame_sep|><|call_sep|><|src_sep|>def inc(x):<|arg_sep|>{"x": "41"}<|action_sep|><|step_into|><|frame_sep|><|line_sep|><|arg_sep|>{"x": "41"}<|src_sep|>    y = x + 1<|action_sep|>`;
    const f = FrameGrammar.forPrompt(tok, `${CALLED}<|step_over|>`, true)!;
    expect(f.allowed([id(S.frameSep)])).toEqual(new Set([...events('line', 'exception'), ...forwardExits]));
    const lineSrc = ids('<|frame_sep|><|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>');
    expect(f.allowed([...lineSrc, ...ids('    return y')])).toEqual(new Set([id(S.actionSep)]));
    for (const a of f.allowed(lineSrc)!) expect('    return y'.startsWith(tok.decode([a]))).toBe(true);
    for (const a of f.allowed(ids('<|frame_sep|><|exception_sep|><|src_sep|>'))!) expect('    y = x + 1'.startsWith(tok.decode([a]))).toBe(true);
    // Stepping into a line that always calls: the call (or an exception), never the next line.
    const main = `${HEAD}<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|><|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return inc(41)<|action_sep|><|step_into|>`;
    expect(FrameGrammar.forPrompt(tok, main, true)!.allowed([id(S.frameSep)])).toEqual(new Set([...events('exception', 'call'), ...forwardExits]));
    // Stepping back over a line's calls lands on the line itself.
    const overCalls = `${HEAD}<|frame_sep|><|inv_return_sep|><|src_sep|>    return inc(41)<|arg_sep|>"42"<|action_sep|><|inv_step_into|><|frame_sep|><|inv_line_call_sep|><|src_sep|>    return inc(41)<|arg_sep|>{}<|action_sep|><|inv_step_over|>`;
    expect(FrameGrammar.forPrompt(tok, overCalls, true)!.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_line')));
    // Back to the call: only the function's inv_call.
    const out = second.replace(/<\|inv_step_into\|>$/, '<|inv_step_call|>');
    expect(FrameGrammar.forPrompt(tok, out, true)!.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_call')));
  });

  test('forward from a return: what follows the calling line; from a call: the first statement', () => {
    const events = (...names: Parameters<typeof eventToken>[0][]) => names.map((e) => id(eventToken(e)));
    const forwardExits = EXIT_KINDS.filter((k) => k !== 'inv_exit_entry').map((k) => id(exitToken(k)));
    const inInc = `${MAIN_CALL}<|step_into|><|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return inc(41)<|action_sep|><|step_into|><|frame_sep|><|call_sep|><|src_sep|>def inc(x):<|arg_sep|>{"x": "41"}<|action_sep|>`;
    // main's line returns after inc does: main's return there, another call, or an exception; no line.
    const back = FrameGrammar.forPrompt(tok, `${inInc}<|step_return|><|frame_sep|><|return_sep|><|src_sep|>    return y<|arg_sep|>"42"<|action_sep|><|step_into|>`, true)!;
    expect(back.allowed([id(S.frameSep)])).toEqual(new Set([...events('exception', 'call', 'return'), ...forwardExits]));
    const first = FrameGrammar.forPrompt(tok, `${inInc}<|step_over|>`, true)!;
    expect(first.allowed([id(S.frameSep)])).toEqual(new Set([...events('line'), ...forwardExits]));
  });

  test("stepping back into a line's calls: the return of a function the line names; back past a call: the caller, or the entry's exit", () => {
    const ids = (text: string) => Array.from(tok.encode(text));
    const events = (...names: Parameters<typeof eventToken>[0][]) => names.map((e) => id(eventToken(e)));
    const code = 'def inc(x):\n    y = x + 1\n    return y\n\ndef other(x):\n    return x\n\ndef twice(x):\n    a = inc(x)\n    return a\n';
    const frame = (event: string, src: string, arg: string, action: string) => `<|frame_sep|><|${event}_sep|><|src_sep|>${src}<|arg_sep|>${arg}<|action_sep|><|${action}|>`;
    const atCall = `<|begin_of_text|><|trace_context_start|>${code}${frame('inv_return', '    return a', '"43"', 'inv_step_into')}${frame('inv_line', '    return a', '{"..": ".."}', 'inv_step_into')}${frame('inv_line_call', '    a = inc(x)', '{"..": ".."}', 'inv_step_into')}`;
    const into = FrameGrammar.forPrompt(tok, atCall, true)!;
    expect(into.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_return')));
    const retSrc = ids('<|frame_sep|><|inv_return_sep|><|src_sep|>');
    const spells = (g: FrameGrammar, prefix: number[], text: string) => ids(text).every((t, k) => g.allowed([...prefix, ...ids(text).slice(0, k)])?.has(t));
    expect(spells(into, retSrc, '    return y')).toBe(true);
    expect(spells(into, retSrc, '    y = x + 1')).toBe(true);
    // `other` is not named on the line, `return a` is the caller's own line.
    expect(spells(into, retSrc, '    return x')).toBe(false);
    expect(spells(into, retSrc, '    return a')).toBe(false);
    // Inside the callee, back to its call, then one more step back: the caller's line (or an earlier call's return).
    const inCallee = `${atCall}${frame('inv_return', '    return y', '"43"', 'inv_step_call')}${frame('inv_call', 'def inc(x):', '{"x": "42"}', 'inv_step_into')}`;
    const past = FrameGrammar.forPrompt(tok, inCallee, true)!;
    expect(past.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_line', 'inv_return')));
    expect(spells(past, ids('<|frame_sep|><|inv_line_sep|><|src_sep|>'), '    a = inc(x)')).toBe(true);
    expect(spells(past, ids('<|frame_sep|><|inv_line_sep|><|src_sep|>'), '    return a')).toBe(false);
    // Back past the entry's own call: only the exit.
    const entry = `${atCall.replace(/<\|inv_step_into\|>$/, '<|inv_step_over|>')}${frame('inv_line', '    a = inc(x)', '{"..": ".."}', 'inv_step_into')}${frame('inv_call', 'def twice(x):', '{"x": "42"}', 'inv_step_over')}`;
    expect(FrameGrammar.forPrompt(tok, entry, true)!.allowed([id(S.frameSep)])).toEqual(new Set([id(exitToken('inv_exit_entry'))]));
  });

  test("stepping back from a comprehension's line: like any line in its function's own frame, open in the comprehension's", () => {
    const events = (...names: Parameters<typeof eventToken>[0][]) => names.map((e) => id(eventToken(e)));
    const code = 'def pack(xs):\n    ys = [x + 1 for x in xs]\n    return ys\n';
    const comp = '    ys = [x + 1 for x in xs]';
    const frame = (event: string, src: string, arg: string, action: string) => `<|frame_sep|><|${event}_sep|><|src_sep|>${src}<|arg_sep|>${arg}<|action_sep|><|${action}|>`;
    const atCopy = `<|begin_of_text|><|trace_context_start|>${code}${frame('inv_return', '    return ys', '"[2]"', 'inv_step_over')}${frame('inv_line', '    return ys', '{"..": ".."}', 'inv_step_over')}`;
    // Stepped over the comprehension: pack's own frame at its first statement, so only its call comes before.
    const own = `${atCopy}${frame('inv_line_call', comp, '{"ys": "[2]"}', 'inv_step_over')}${frame('inv_line', comp, '{"..": ".."}', 'inv_step_over')}`;
    expect(FrameGrammar.forPrompt(tok, own, true)!.allowed([id(S.frameSep)])).toEqual(new Set(events('inv_call')));
    // Stepped into it: the comprehension's own line events read the same line, so any inverse event may come.
    const inside = `${atCopy}${frame('inv_line_call', comp, '{"ys": "[2]"}', 'inv_step_into')}${frame('inv_return', comp, '"[2]"', 'inv_step_into')}${frame('inv_line', comp, '{"..": ".."}', 'inv_step_over')}`;
    expect(FrameGrammar.forPrompt(tok, inside, true)!.allowed([id(S.frameSep)])).toEqual(new Set([...events(...INVERSE_EVENTS), id(exitToken('inv_exit_entry'))]));
  });

  test("LOCALS keys: a step's delta names what the line spells, a call frame its parameters in order", () => {
    const ids = (text: string) => Array.from(tok.encode(text));
    // JSON whitespace may come between tokens; the rest must fit the keys.
    const keysAllowed = (g: FrameGrammar, head: string) => [...g.allowed(ids(head))!].map((a) => tok.decode([a])).filter((t) => t.trim() !== '');
    const fits = (names: string[]) => (text: string) => names.some((n) => `${n}": "`.startsWith(text) || text.startsWith(`${n}"`));
    // Stepping from `y = x + 1`: only `..`, `y` and `x` may have changed (not `inc`, not `z`).
    const CALLED = `${HEAD}<|frame_sep|><|call_sep|><|src_sep|>def inc(x):<|arg_sep|>{"x": "41"}<|action_sep|><|step_into|><|frame_sep|><|line_sep|><|arg_sep|>{"x": "41"}<|src_sep|>    y = x + 1<|action_sep|><|step_into|>`;
    const step = FrameGrammar.forPrompt(tok, CALLED, true)!;
    const opened = keysAllowed(step, '<|frame_sep|><|line_sep|><|arg_sep|>{"');
    expect(opened.every(fits(['..', 'x', 'y']))).toBe(true);
    expect(opened.some((t) => t.startsWith('y'))).toBe(true);
    // Back to the call: exactly the parameters, so after `{` only `"x"`, and after its value only `}`.
    const back = `${HEAD}<|frame_sep|><|inv_return_sep|><|src_sep|>    return y<|arg_sep|>"42"<|action_sep|><|inv_step_call|>`;
    const call = FrameGrammar.forPrompt(tok, back, true)!;
    const head = '<|frame_sep|><|inv_call_sep|><|src_sep|>def inc(x):<|arg_sep|>{';
    expect(keysAllowed(call, head).every((t) => '"x": "'.startsWith(t) || t.startsWith('"x"'))).toBe(true);
    expect(keysAllowed(call, head).includes('}')).toBe(false);
    expect(keysAllowed(call, `${head}"x": "41"`).every((t) => t.trim() === '}')).toBe(true);
  });

  test('accepts every token of true answers, and closes each field only with its own separator where its text is whole', () => {
    const closers = new Set([S.srcSep, S.argSep, S.actionSep].map(id));
    for (const constrainSrc of [true, false]) {
      for (const [prompt, answer] of ANSWERS) {
        const g = FrameGrammar.forPrompt(tok, prompt, constrainSrc)!;
        const ids = Array.from(tok.encode(answer));
        ids.forEach((next, k) => {
          const allowed = g.allowed(ids.slice(0, k));
          expect([answer, k, allowed?.has(next)]).toEqual([answer, k, true]);
          // The true answer's closer is the only separator allowed where it stands.
          if (closers.has(next) && k > 2) expect([answer, k, [...allowed!].filter((i) => closers.has(i))]).toEqual([answer, k, [next]]);
        });
      }
    }
  });

  test('refuses what the parser would not read: the wrong closer, a second special token, bad or duplicate JSON, text after a whole value', () => {
    const g = FrameGrammar.forPrompt(tok, FORWARD, true)!;
    const ids = (text: string) => Array.from(tok.encode(text));
    const refuses = (head: string, next: number) => expect([head, g.allowed(ids(head))?.has(next)]).toEqual([head, false]);
    // A call frame's SRC closes with <|arg_sep|>, not <|action_sep|> (the commonest failure before).
    refuses('<|frame_sep|><|call_sep|><|src_sep|>def inc(x):', id(S.actionSep));
    // An event token is followed by its first separator, nothing else.
    refuses('<|frame_sep|><|line_sep|>', id(S.frameSep));
    refuses('<|frame_sep|><|line_sep|>', id(S.srcSep));
    // LOCALS: no closer before the object is whole, only the closer after it.
    refuses('<|frame_sep|><|line_sep|><|arg_sep|>{"x": "41"', id(S.srcSep));
    expect(g.allowed(ids('<|frame_sep|><|line_sep|><|arg_sep|>{"x": "41"}'))).toEqual(new Set([id(S.srcSep)]));
    // A key written twice cannot be closed.
    const dup = ids('<|frame_sep|><|line_sep|><|arg_sep|>{"x": "41", "x');
    for (const a of g.allowed(dup)!) expect(tok.decode([...dup.slice(3), a]).endsWith('"x"')).toBe(false);
    // A return's VALUE is a string or null, not an object.
    refuses('<|frame_sep|><|return_sep|><|src_sep|>    return y<|arg_sep|>', ids('{')[0]);
    // Inside a string every token that only lengthens it is allowed, special tokens are not.
    const inString = g.allowed(ids('<|frame_sep|><|line_sep|><|arg_sep|>{"x": "4'))!;
    expect(inString.has(ids('1')[0])).toBe(true);
    expect(inString.has(id(S.frameSep))).toBe(false);
  });

  test('a random model decodes only answers that parse or are cut by the token limit; without the grammar most do not parse', async () => {
    await initBackend('wasm', () => undefined);
    const model = LlamaModel.create(resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 32, n_layers: 1, n_heads: 2, d_ff: 48, max_seq_len: 384, init_std: 0.5 }), 3);
    const grammar = new ModelCompleter(model, tok, { maxNewTokens: 120 });
    const free = new ModelCompleter(model, tok, { maxNewTokens: 120, constrainFrame: false });
    const counts = { grammar: 0, free: 0 };
    for (const prompt of [FORWARD, BREAKPOINT, INVERSE]) {
      for (let seed = 0; seed < 6; seed++) {
        const r = parseNextFrame(prompt, await grammar.completeFrame(prompt, { temperature: 1, seed }));
        // A random model can write one string until the limit; what it wrote is still a valid prefix.
        if (!r.ok) expect([seed, r.error]).toEqual([seed, expect.stringMatching(/at end of text$/)]);
        else counts.grammar++;
        if (parseNextFrame(prompt, await free.completeFrame(prompt, { temperature: 1, seed })).ok) counts.free++;
      }
      // Beam search too (the default decoding of unsampled answers).
      expect(parseNextFrame(prompt, await grammar.completeFrame(prompt)).ok).toBe(true);
    }
    expect(counts.grammar).toBeGreaterThanOrEqual(9);
    expect(counts.free).toBeLessThan(3);
    model.dispose();
  });
});

import { parseDocument, parseNextFrame, preparePrefix } from '../../src/ndl/parse';
import { Rng } from '../../src/util/rng';

import { reference } from '../helpers/reference';

describe('parser', () => {
  const forward = reference('count.forward.ndl');
  const inverse = reference('count.inverse.ndl');

  it('reads the reference forward document, resolving every delta to the full locals', () => {
    const doc = parseDocument(forward);
    expect(doc.error).toBeUndefined();
    expect(doc.complete).toBe(true);
    expect(doc.direction).toBe('forward');
    expect(doc.exit).toBe('normal');
    expect(doc.context.endsWith('def main():\n    return count("berry", "r")\n')).toBe(true);
    expect(doc.frames).toHaveLength(18);
    expect(doc.frames.every((f) => f.action?.kind === 'step_into')).toBe(true);
    const lastLine = doc.frames[15];
    expect(lastLine).toMatchObject({ event: 'line', src: '    return n', elided: true, shown: [], exact: true });
    expect(lastLine.locals).toEqual({ s: "'berry'", t: "'r'", n: '2', c: "'y'" });
    expect(doc.frames[16]).toMatchObject({ event: 'return', value: '2' });
    expect(doc.frames[16].locals).toBeUndefined();
    expect(doc.frames[2]).toMatchObject({ event: 'call', src: 'def count(s, t):', elided: false });
  });

  it('reads the reference inverse document; deltas after a return frame are marked inexact', () => {
    const doc = parseDocument(inverse);
    expect(doc.error).toBeUndefined();
    expect(doc.direction).toBe('inverse');
    expect(doc.exit).toBe('inv_exit_entry');
    expect(doc.frames[0]).toMatchObject({ event: 'inv_return', value: '2' });
    expect(doc.frames[1]).toMatchObject({ event: 'inv_line', exact: false, locals: {} });
    expect(doc.frames[4].locals).toEqual({ c: "'r'" });
    expect(doc.frames[5].locals).toEqual({ c: "'r'", n: '1' });
    const call = doc.frames[doc.frames.length - 1];
    expect(call).toMatchObject({ event: 'inv_call', exact: true, locals: { s: "'berry'", t: "'r'" } });
  });

  it('keeps everything before a problem and reports it, for every truncation of a document', () => {
    for (let cut = 0; cut < forward.length; cut += 7) {
      const doc = parseDocument(forward.slice(0, cut));
      expect(doc.complete).toBe(forward.slice(0, cut).includes('<|trace_end|>'));
      expect(doc.exit).toBe(forward.slice(0, cut).includes('<|exit_normal|>') ? 'normal' : undefined);
      if (doc.error) expect(doc.error).toMatch(/at (offset \d+|end of text)/);
    }
    const half = parseDocument(forward.slice(0, forward.lastIndexOf('    return n')));
    expect(half.frames.length).toBeGreaterThan(10);
  });

  it('returns errors for garbled text instead of throwing', () => {
    const bad = [
      '',
      'hello',
      '<|begin_of_text|><|frame_sep|>',
      forward.replace('<|src_sep|>def count', '<|arg_sep|>def count'),
      forward.replace('{"s": "\'berry\'"', '{"s": 1'),
      forward.replace('<|return_sep|>', '<|inv_return_sep|>'),
      forward.replace('<|trace_end|><|end_of_text|>', '<|trace_end|><|end_of_text|>junk'),
      forward.replace('{"..": "..", "n": "0"}', '{"n": "0", "..": ".."}'),
    ];
    for (const text of bad) {
      const doc = parseDocument(text);
      expect(typeof doc.error).toBe('string');
    }
  });

  it('parses a budget-cut document whose last frame has no action', () => {
    const cut = forward.indexOf('<|step_into|><|frame_sep|><|line_sep|><|arg_sep|>{"..": ".."}<|src_sep|>    n = 0');
    const text = forward.slice(0, cut) + '<|trace_end|><|end_of_text|>';
    const doc = parseDocument(text);
    expect(doc.error).toBeUndefined();
    expect(doc.complete).toBe(true);
    expect(doc.exit).toBeUndefined();
    expect(doc.frames).toHaveLength(3);
    expect(doc.frames[2].action).toBeUndefined();
  });

  describe('parseNextFrame', () => {
    // Prefix: everything up to and including the action of frame k; continuation: the rest.
    const frameStarts: number[] = [];
    for (let i = forward.indexOf('<|frame_sep|>'); i >= 0; i = forward.indexOf('<|frame_sep|>', i + 1)) frameStarts.push(i);

    it('gives each next frame of the reference document, resolved against the prefix', () => {
      const full = parseDocument(forward);
      for (let k = 1; k < frameStarts.length; k++) {
        const r = parseNextFrame(forward.slice(0, frameStarts[k]), forward.slice(frameStarts[k]));
        if (k < full.frames.length) expect(r).toEqual({ ok: true, frame: full.frames[k] });
        else expect(r).toEqual({ ok: true, exit: 'normal' });
      }
    });

    it('accepts a continuation stopped at or before <|action_sep|>, and with a different action', () => {
      const prefix = forward.slice(0, frameStarts[4]);
      const frame = '<|frame_sep|><|line_sep|><|arg_sep|>{"..": "..", "n": "0"}<|src_sep|>    for c in s:';
      for (const cont of [frame, frame + '<|action_sep|>', frame + '<|action_sep|><|continue|>junk']) {
        const r = parseNextFrame(prefix, cont);
        expect(r.ok && r.frame?.locals).toEqual({ s: "'berry'", t: "'r'", n: '0' });
      }
    });

    it('reports bad continuations and bad prefixes as errors', () => {
      const prefix = forward.slice(0, frameStarts[4]);
      expect(parseNextFrame(prefix, '').ok).toBe(false);
      expect(parseNextFrame(prefix, 'text<|frame_sep|>').ok).toBe(false);
      expect(parseNextFrame(prefix, '<|frame_sep|><|line_sep|><|arg_sep|>{"n": ').ok).toBe(false);
      expect(parseNextFrame(prefix, '<|frame_sep|><|inv_line_sep|><|src_sep|>x<|arg_sep|>{}').ok).toBe(false);
      expect(parseNextFrame(forward, '<|frame_sep|>').ok).toBe(false);
      expect(parseNextFrame(prefix.slice(0, -5), '<|frame_sep|>').ok).toBe(false);
      const cut = parseNextFrame(prefix, '<|frame_sep|><|line_sep|><|arg_sep|>{"n": "0"');
      expect(cut).toEqual({ ok: false, error: 'continuation: text ends before <|src_sep|> at end of text' });
      const r = parseNextFrame(prefix, '<|frame_sep|><|line_sep|><|arg_sep|>{"n": "0"<|src_sep|>    for c in s:');
      expect(r).toEqual({ ok: false, error: expect.stringContaining('bad LOCALS JSON') });
    });
  });

  it('parses continuations after a breakpoint target, rejecting text that runs on from it', () => {
    const prefix = forward.slice(0, forward.indexOf('<|step_into|>')) + '<|breakpoint|>    return n';
    const next = preparePrefix(prefix);
    const frame = '<|frame_sep|><|line_sep|><|arg_sep|>{"s": "\'berry\'"}<|src_sep|>    return n<|action_sep|>';
    expect(next(frame)).toEqual({ ok: true, frame: { event: 'line', src: '    return n', elided: false, exact: true, shown: [['s', "'berry'"]], locals: { s: "'berry'" } } });
    expect(next('  # more' + frame)).toEqual({ ok: false, error: expect.stringContaining('must start with <|frame_sep|>') });
    expect(next('<|frame_sep|><|exit_normal|>')).toEqual({ ok: true, exit: 'normal' });
  });

  it('never throws on randomly damaged documents (fuzz)', () => {
    const rng = Rng.from(1, 'ndl-parse-fuzz');
    const pieces = [...forward.split(/(<\|[a-z_]+\|>)/), ...inverse.split(/(<\|[a-z_]+\|>)/)].filter((p) => p !== '');
    for (let n = 0; n < 2000; n++) {
      const base = (rng.bool() ? forward : inverse).split(/(<\|[a-z_]+\|>)/).filter((p) => p !== '');
      for (let m = rng.range(1, 4); m > 0; m--) {
        const at = rng.int(base.length);
        const op = rng.int(3);
        if (op === 0) base.splice(at, 1);
        else if (op === 1) base.splice(at, 0, rng.choice(pieces));
        else base[at] = base[at].slice(0, rng.int(base[at].length + 1));
      }
      const text = base.join('');
      const doc = parseDocument(text);
      expect(doc.error ?? '').not.toMatch(/internal/);
      const cut = rng.int(text.length + 1);
      const r = parseNextFrame(text.slice(0, cut), text.slice(cut));
      expect(r.ok ? '' : r.error).not.toMatch(/internal/);
    }
  });
});

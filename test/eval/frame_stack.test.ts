import { forwardStop, inverseStop, opensOwnFrame } from '../../src/eval/frame_stack';
import { parseDocument } from '../../src/ndl/parse';

const CODE = 'def inc(x):\n    y = [x + 1 for _ in [0]]\n    return y[0]\n\ndef twice(x):\n    a = inc(x)\n    return inc(a)\n';
const frame = (event: string, src: string, arg: string, action: string) => `<|frame_sep|><|${event}_sep|><|src_sep|>${src}<|arg_sep|>${arg}<|action_sep|>${action}`;
const line = (src: string, locals: string, action: string) => `<|frame_sep|><|line_sep|><|arg_sep|>${locals}<|src_sep|>${src}<|action_sep|>${action}`;
const frames = (text: string) => parseDocument(`<|begin_of_text|><|trace_context_start|>${CODE}def main():\n    return twice(1)\n${text}`).frames;

describe('which frame a stop is in, read from the document', () => {
  const toInc = [
    frame('call', 'def main():', '{}', '<|step_into|>'),
    line('    return twice(1)', '{}', '<|step_into|>'),
    frame('call', 'def twice(x):', '{"x": "1"}', '<|step_into|>'),
    line('    a = inc(x)', '{"..": ".."}', '<|step_into|>'),
    frame('call', 'def inc(x):', '{"x": "1"}', '<|step_into|>'),
    line('    y = [x + 1 for _ in [0]]', '{"..": ".."}', '<|step_into|>'),
  ].join('');

  test("forward: a function's own frame or a comprehension's, and the line that called a function that returns", () => {
    expect(forwardStop(frames(toInc))).toEqual({ ownFrame: true, caller: undefined });
    const inComp = toInc + [frame('call', '    y = [x + 1 for _ in [0]]', '{".0": "<list_iterator object at 0x…>"}', '<|step_into|>'), line('    y = [x + 1 for _ in [0]]', '{"..": ".."}', '<|step_into|>')].join('');
    expect(forwardStop(frames(inComp))).toEqual({ ownFrame: false, caller: undefined });
    // The comprehension returns into inc's line; inc returns into twice's `a = inc(x)`.
    const compReturns = inComp + frame('return', '    y = [x + 1 for _ in [0]]', '"[2]"', '<|step_into|>');
    expect(forwardStop(frames(compReturns))).toEqual({ ownFrame: false, caller: '    y = [x + 1 for _ in [0]]' });
    const incReturns = compReturns + line('    return y[0]', '{"x": "1", "y": "[2]"}', '<|step_into|>') + frame('return', '    return y[0]', '"2"', '<|step_into|>');
    expect(forwardStop(frames(incReturns))).toEqual({ ownFrame: true, caller: '    a = inc(x)' });
    // Back in twice, on to its second call of inc.
    const again = incReturns + line('    return inc(a)', '{"x": "1", "a": "2"}', '<|step_into|>') + frame('call', 'def inc(x):', '{"x": "2"}', '<|step_return|>') + frame('return', '    return y[0]', '"3"', '<|step_over|>');
    expect(forwardStop(frames(again))).toEqual({ ownFrame: true, caller: '    return inc(a)' });
    // After a breakpoint the frames below its stop are unknown; a plain line's frame is a function's own.
    const jumped = toInc.replace(/<\|step_into\|>$/, '<|breakpoint|>    return y[0]') + line('    return y[0]', '{"x": "1", "y": "[2]"}', '<|step_into|>');
    expect(forwardStop(frames(jumped))).toEqual({ ownFrame: true, caller: undefined });
    expect(forwardStop(frames(jumped + frame('return', '    return y[0]', '"2"', '<|step_into|>')))).toEqual({ ownFrame: true, caller: undefined });
    const intoComp = toInc.replace(/<\|step_into\|>$/, '<|breakpoint|>    y = [x + 1 for _ in [0]]');
    expect(forwardStop(frames(intoComp + line('    y = [x + 1 for _ in [0]]', '{"x": "1"}', '<|step_into|>')))).toEqual({ ownFrame: false, caller: undefined });
    // A call after the jump: its return's caller is the line the jump landed on.
    const toTwice = toInc.replace(/<\|step_into\|>$/, '<|breakpoint|>    return inc(a)') + line('    return inc(a)', '{"x": "1", "a": "2"}', '<|step_into|>');
    const callAfter = toTwice + frame('call', 'def inc(x):', '{"x": "2"}', '<|step_return|>') + frame('return', '    return y[0]', '"3"', '<|step_into|>');
    expect(forwardStop(frames(callAfter))).toEqual({ ownFrame: true, caller: '    return inc(a)' });
    expect(forwardStop(frames(''))).toBeUndefined();
  });

  test("backwards: the frame a stop is in, and the line whose calls a callee's inv_call belongs to (null at the entry's own call)", () => {
    const back = [
      frame('inv_return', '    return inc(a)', '"3"', '<|inv_step_into|>'),
      frame('inv_line_call', '    return inc(a)', '{"..": ".."}', '<|inv_step_into|>'),
      frame('inv_return', '    return y[0]', '"3"', '<|inv_step_call|>'),
      frame('inv_call', 'def inc(x):', '{"x": "2"}', '<|inv_step_into|>'),
    ].join('');
    expect(inverseStop(frames(back))).toEqual({ ownFrame: true, caller: '    return inc(a)' });
    const out = back + frame('inv_line', '    return inc(a)', '{"x": "1", "a": "2"}', '<|inv_step_call|>') + frame('inv_call', 'def twice(x):', '{"x": "1"}', '<|inv_step_over|>');
    expect(inverseStop(frames(out))).toEqual({ ownFrame: true, caller: null });
    // A truncated run's tree does not open at a return: nothing is known.
    expect(inverseStop(frames(frame('inv_call', 'def twice(x):', '{"x": "1"}', '<|inv_step_over|>')))).toBeUndefined();
    // Into the first call of twice's line: inc's frame, stepped back to its comprehension line.
    const toCompLine = [
      frame('inv_return', '    return inc(a)', '"3"', '<|inv_step_over|>'),
      frame('inv_line_call', '    return inc(a)', '{"..": ".."}', '<|inv_step_over|>'),
      frame('inv_line', '    return inc(a)', '{"..": ".."}', '<|inv_step_into|>'),
      frame('inv_line_call', '    a = inc(x)', '{"a": "2"}', '<|inv_step_into|>'),
      frame('inv_return', '    return y[0]', '"2"', '<|inv_step_over|>'),
      frame('inv_line', '    return y[0]', '{"..": ".."}', '<|inv_step_over|>'),
    ].join('');
    const comp = '    y = [x + 1 for _ in [0]]';
    const onLine = toCompLine + frame('inv_line_call', comp, '{"y": "[2]"}', '<|inv_step_over|>') + frame('inv_line', comp, '{"..": ".."}', '<|inv_step_over|>');
    expect(inverseStop(frames(onLine))).toEqual({ ownFrame: true, caller: undefined });
    // Into the comprehension instead: its frame's line events read the same line.
    const inComp = toCompLine + frame('inv_line_call', comp, '{"y": "[2]"}', '<|inv_step_into|>') + frame('inv_return', comp, '"[2]"', '<|inv_step_into|>') + frame('inv_line', comp, '{"..": ".."}', '<|inv_step_over|>');
    expect(inverseStop(frames(inComp))).toEqual({ ownFrame: false, caller: undefined });
    // A return at a line that does not finish its statement may be a comprehension's on a later line.
    const multiLine = [
      frame('inv_return', '    return inc(a)', '"3"', '<|inv_step_into|>'),
      frame('inv_line_call', '    return inc(a)', '{"..": ".."}', '<|inv_step_into|>'),
      frame('inv_return', '    return sum([', '"3"', '<|inv_step_into|>'),
    ].join('');
    expect(inverseStop(frames(multiLine))).toEqual({ ownFrame: false, caller: undefined });
  });

  test('a call opens a function\'s own frame where it reads a def line', () => {
    expect(opensOwnFrame('def inc(x):')).toBe(true);
    expect(opensOwnFrame('    def inner(y):')).toBe(true);
    expect(opensOwnFrame('    y = [x + 1 for _ in [0]]')).toBe(false);
    expect(opensOwnFrame('@cache')).toBe(false);
  });
});

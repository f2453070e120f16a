import type { StateNode, StateTree } from '../../src/debugger/types';
import { buildContext, formatDocument, localsDelta } from '../../src/ndl/format';
import { parseDocument } from '../../src/ndl/parse';
import { countProgram, handForwardTree, traceAll } from './helpers';
import { reference } from '../helpers/reference';

const PROGRAM = {
  id: 'calls',
  code: 'def g(x):\n    y = x * 2\n    return y\n\ndef f(a):\n    b = g(a)\n    c = b + 1\n    return c\n\n\n',
  input: '3',
};

describe('formatter', () => {
  const [count] = traceAll([countProgram()]);

  it('reproduces the reference forward document from a hand-built tree', () => {
    const tree = handForwardTree(count);
    const steps = tree.nodes.map((_, node) => ({ node, action: { kind: 'step_into' as const } }));
    expect(formatDocument(count, tree, { direction: 'forward', steps, end: 'exit' })).toBe(reference('count.forward.ndl'));
  });

  it('strips trailing newlines of the code in both CONTEXTs', () => {
    const t = { code: 'def f():\n    return 1\n\n\n', entry_call: 'f()' };
    expect(buildContext(t, 'forward')).toBe('def f():\n    return 1\n\ndef main():\n    return f()\n');
    expect(buildContext(t, 'inverse')).toBe('def f():\n    return 1\n');
  });

  it('computes deltas with the ".." marker only when something unchanged was left out', () => {
    expect(localsDelta({ a: '1' }, { a: '1', b: '2' })).toEqual({ elided: true, entries: [['b', '2']] });
    expect(localsDelta({ a: '1' }, { a: '2' })).toEqual({ elided: false, entries: [['a', '2']] });
    expect(localsDelta({}, {})).toEqual({ elided: false, entries: [] });
    // A deleted variable is not marked.
    expect(localsDelta({ a: '1', c: '3' }, { a: '1' })).toEqual({ elided: true, entries: [] });
  });

  describe('forward delta rules', () => {
    const [trace] = traceAll([PROGRAM]);
    const tree = handForwardTree(trace);
    const find = (src: string, event = 'line') => tree.nodes.findIndex((n) => n.src === src && n.event === event);
    const callLine = find('    b = g(a)');
    const nextLine = find('    c = b + 1');
    const gReturn = find('    return y', 'return');

    it('writes a delta after step_over in the same invocation', () => {
      const doc = formatDocument(trace, tree, {
        direction: 'forward',
        steps: [
          { node: callLine, action: { kind: 'step_over' } },
          { node: nextLine, action: { kind: 'continue' } },
        ],
        end: 'exit',
      });
      expect(doc).toContain('<|line_sep|><|arg_sep|>{"..": "..", "b": "6"}<|src_sep|>    c = b + 1');
    });

    it('writes the full dict after a breakpoint jump and after returning from a callee', () => {
      const viaBreakpoint = formatDocument(trace, tree, {
        direction: 'forward',
        steps: [
          { node: callLine, action: { kind: 'breakpoint', target: '    c = b + 1' } },
          { node: nextLine, action: { kind: 'continue' } },
        ],
        end: 'exit',
      });
      expect(viaBreakpoint).toContain('<|breakpoint|>    c = b + 1<|frame_sep|><|line_sep|><|arg_sep|>{"a": "3", "b": "6"}');
      const viaReturn = formatDocument(trace, tree, {
        direction: 'forward',
        steps: [
          { node: gReturn, action: { kind: 'step_into' } },
          { node: nextLine },
        ],
        end: 'budget',
      });
      expect(viaReturn).toBe(
        buildContextDoc(trace) +
          '<|frame_sep|><|return_sep|><|src_sep|>    return y<|arg_sep|>"6"<|action_sep|><|step_into|>' +
          '<|frame_sep|><|line_sep|><|arg_sep|>{"a": "3", "b": "6"}<|src_sep|>    c = b + 1<|action_sep|>' +
          '<|trace_end|><|end_of_text|>',
      );
    });
  });

  it('writes inverse frames with deltas against the later state and full dicts across invocations', () => {
    const node = (index: number, event: StateNode['event'], invocation: number, src: string, locals: Record<string, string>, value: string | null = null): StateNode =>
      ({ index, event, depth: invocation, invocation, line: 0, src, locals, value, traceIndex: 0 });
    const tree: StateTree = {
      direction: 'inverse',
      exitKind: 'inv_exit_entry',
      nodes: [
        node(0, 'inv_return', 1, '    return c', { a: '3', b: '6', c: '7' }, '7'),
        node(1, 'inv_line', 1, '    return c', { a: '3', b: '6', c: '7' }),
        node(2, 'inv_line', 1, '    c = b + 1', { a: '3', b: '6' }),
        node(3, 'inv_line_call', 1, '    b = g(a)', { a: '3' }),
        node(4, 'inv_return', 2, '    return y', { x: '3', y: '6' }, '6'),
        node(5, 'inv_line', 2, '    return y', { x: '3', y: '6' }),
        node(6, 'inv_line', 2, '    y = x * 2', { x: '3' }),
        node(7, 'inv_call', 2, 'def g(x):', { x: '3' }),
        node(8, 'inv_line', 1, '    b = g(a)', { a: '3' }),
        node(9, 'inv_call', 1, 'def f(a):', { a: '3' }),
      ],
    };
    const steps = tree.nodes.map((_, i) => ({ node: i, action: { kind: 'inv_step_into' as const } }));
    const doc = formatDocument({ code: PROGRAM.code, entry_call: 'f(3)' }, tree, { direction: 'inverse', steps, end: 'exit' });
    const args = doc.split('<|arg_sep|>').slice(1).map((s) => s.split('<|action_sep|>')[0]);
    expect(args).toEqual([
      '"7"',
      '{"..": ".."}',
      '{"..": ".."}',
      '{"..": ".."}',
      '"6"',
      '{"..": ".."}',
      '{"..": ".."}',
      '{"x": "3"}',
      '{"a": "3"}',
      '{"a": "3"}',
    ]);
    expect(doc.startsWith('<|begin_of_text|><|trace_context_start|>def g(x):')).toBe(true);
    expect(doc.endsWith('<|inv_step_into|><|frame_sep|><|inv_exit_entry|><|trace_end|><|end_of_text|>')).toBe(true);
    expect(parseDocument(doc).error).toBeUndefined();
  });
});

function buildContextDoc(trace: { code: string; entry_call: string }): string {
  return '<|begin_of_text|><|trace_context_start|>' + buildContext(trace, 'forward');
}

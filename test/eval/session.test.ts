import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import type { TextCompleter } from '../../src/eval/completer';
import { OracleCompleter, replayPrefix } from '../../src/eval/oracle_completer';
import { DebugSession, DebugSessionOptions } from '../../src/eval/session';
import { parameterNames, ProgramSource, rebuildCall } from '../../src/eval/session_source';
import { nextFrameText } from '../../src/eval/tasks';
import { cutBeforeFrame } from '../../src/eval/tasks';
import { formatDocument } from '../../src/ndl/format';
import { EXIT } from '../../src/debugger/types';
import { traceInProcess } from '../../src/trace/inprocess';
import { ModelCompleter } from '../../src/eval/model_completer';
import { initBackend } from '../../src/backend/backend';
import { resolveModelConfig } from '../../src/model/config';
import { LlamaModel } from '../../src/model/model';
import { Tokenizer } from '../../src/tokenizer';
import type { TraceRecord } from '../../src/trace/types';
import type { Direction } from '../../src/debugger';

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'eval', 'debug');
const ROOT = path.join(__dirname, '..', '..');

function program(file: string, call: string): { code: string; call: string; trace: TraceRecord } {
  const code = fs.readFileSync(path.join(FIXTURES, file), 'utf8');
  const entry = call.slice(0, call.indexOf('('));
  const [trace] = traceInProcess([{ id: file, code, entry, input: call.slice(entry.length + 1, -1) }]);
  expect(trace.entry_call).toBe(call);
  return { code, call, trace };
}

const COUNT = program('count.py', 'count("berry", "r")');
const HELPER = program('helper.py', 'f(3, 4, 5, scale=2)');

/** Runs a script the way `ndbg debug --script` prints it. */
async function transcript(options: DebugSessionOptions, script: string): Promise<string[]> {
  const s = new DebugSession(options);
  const out = [...s.start()];
  for (const c of script.split(';')) {
    out.push(`(ndbg) ${c}`);
    const r = await s.execute(c);
    out.push(...r.output);
    if (r.quit) break;
  }
  return out;
}

/** Stop lines only (`> ...` and `--Exit--`), without the commands, banner or extra lines. */
function stops(lines: string[]): string[] {
  return lines.filter((l) => l.startsWith('> ') || l.startsWith('--Exit--'));
}

/**
 * A wrong model: the true next frame (found by replaying the prefix's ACTIONS, so it keeps
 * working once its own history is wrong), passed through `corrupt` at chosen steps.
 */
class CorruptingCompleter implements TextCompleter {
  readonly name = 'corrupting';
  private step = 0;
  constructor(
    private readonly trace: TraceRecord,
    private readonly corrupt: (text: string, step: number) => string,
  ) {}
  async completeFrame(prefix: string): Promise<string> {
    const r = replayPrefix(this.trace, prefix);
    if (!r) return this.corrupt('', this.step++); // the real run ended before the model's
    const all = r.next === EXIT ? r.steps : [...r.steps, { node: r.next }];
    const text = formatDocument(this.trace, r.tree, { direction: r.tree.direction, steps: all, end: r.next === EXIT ? 'exit' : 'budget' });
    // Frame k of the true document is the next one (an exit is preceded by <|frame_sep|> too).
    const truth = nextFrameText(text.slice(cutBeforeFrame(text, r.steps.length).length));
    return this.corrupt(truth, this.step++);
  }
}

describe('DebugSession with the oracle (a perfect model)', () => {
  it('prints a pdb-like transcript where every stop matches the real run', async () => {
    const out = await transcript(
      { ...COUNT, completer: new OracleCompleter(COUNT.trace), direction: 'forward', verify: true },
      's;s;s;n;n;b 5;p n;r;r;c',
    );
    expect(out).toEqual([
      'ndbg debug: 8 lines, main calls count("berry", "r"); forward session, model: oracle, checked against the real run. h for help.',
      '> line 7 in main [call]: def main():    {}   [=]',
      '(ndbg) s',
      '> line 8 in main: return count("berry", "r")    {}   [=]',
      '(ndbg) s',
      "> line 1 in count [call]: def count(s, t):    {'s': 'berry', 't': 'r'}   [=]",
      '(ndbg) s',
      "> line 2 in count: n = 0    {'s': 'berry', 't': 'r'}   [=]",
      '(ndbg) n',
      "> line 3 in count: for c in s:    {'s': 'berry', 't': 'r', 'n': 0}   [=]",
      '(ndbg) n',
      "> line 4 in count: n += int(c == t)    {'s': 'berry', 't': 'r', 'n': 0, 'c': 'b'}   [=]",
      '(ndbg) b 5',
      'Breakpoint at line 5: return n',
      "> line 5 in count: return n    {'s': 'berry', 't': 'r', 'n': 2, 'c': 'y'}   [=]",
      '(ndbg) p n',
      'n = 2',
      '  real: n = 2   [=]',
      '(ndbg) r',
      '> line 5 in count [return]: return n    -> 2   [=]',
      '(ndbg) r',
      '> line 8 in main [return]: return count("berry", "r")    -> 2   [=]',
      '(ndbg) c',
      '--Exit-- the program finished (exit_normal)   [=]',
    ]);
  });

  it('keeps the model document equal to the true document of the same actions', async () => {
    const s = new DebugSession({ ...HELPER, completer: new OracleCompleter(HELPER.trace), direction: 'forward', verify: false });
    for (const c of ['s', 's', 's', 's', 'n', 'r', 's', 'b return w', 'r', 'c']) await s.execute(c);
    expect(s.finished).toBe(true);
    const r = replayPrefix(HELPER.trace, s.document.replace(/<\|frame_sep\|><\|exit_normal\|>$/, ''));
    expect(r?.next).toBe(EXIT);
    const truth = formatDocument(HELPER.trace, r!.tree, { direction: 'forward', steps: r!.steps, end: 'exit' });
    expect(s.document + '<|trace_end|><|end_of_text|>').toBe(truth);
  });

  it('breaks on a line given by number or by text, in any function, and on lines never reached again', async () => {
    const out = await transcript(
      { ...HELPER, completer: new OracleCompleter(HELPER.trace), direction: 'forward', verify: true },
      's;b return w;b     return w;b 10;b 7',
    );
    expect(stops(out)).toEqual([
      '> line 13 in main [call]: def main():    {}   [=]',
      '> line 14 in main: return f(3, 4, 5, scale=2)    {}   [=]',
      "> line 3 in double: return w    {'v': 3, 'w': 6}   [=]",
      "> line 3 in double: return w    {'v': 4, 'w': 8}   [=]",
      "> line 10 in f: d += x    {'a': 3, 'b': 4, 'scale': 2, 'rest': (5,), 'c': 6, 'd': 14, 'x': 5}   [=]",
      // line 7 (c = double(a)) already ran: the breakpoint is never hit, the program runs to its end
      '--Exit-- the program finished (exit_normal)   [=]',
    ]);
  });

  it('runs an inverse session back to the call and shows the recovered arguments', async () => {
    const out = await transcript(
      { ...HELPER, completer: new OracleCompleter(HELPER.trace), direction: 'inverse', verify: true },
      'rs;rs;rs;rs;rs;rs;rc;rc;rc;rc',
    );
    expect(out[1]).toBe('> line 11 in f [inv_return]: return [c, d * scale]    -> [6, 38]   [=]');
    expect(out.filter((l) => l.includes('[≠'))).toEqual([]);
    // back through the loop to line 8, whose call of double(b) rs enters at double's return
    expect(stops(out).slice(5, 7)).toEqual([
      "> line 8 in f [inv_line_call]: d = double(b) + c    {..., 'd': 14}   [=]",
      '> line 3 in double [inv_return]: return w    -> 8   [=]',
    ]);
    const calls = out.filter((l) => l.startsWith('  call: '));
    expect(calls).toEqual(['  call: double(4)', '  call: f(3, 4, *(5,), scale=2)']);
    expect(out[out.length - 1]).toBe("--Exit-- back before the entry function's call (inv_exit_entry)   [=]");
  });

  it('rc straight from the return predicts the arguments (CruxEval input prediction)', async () => {
    const out = await transcript({ ...COUNT, completer: new OracleCompleter(COUNT.trace), direction: 'inverse', verify: false }, 'rc');
    expect(out.slice(1)).toEqual([
      '> line 5 in count [inv_return]: return n    -> 2',
      '(ndbg) rc',
      "> line 1 in count [inv_call]: def count(s, t):    {'s': 'berry', 't': 'r'}",
      "  call: count('berry', 'r')",
    ]);
  });

  it('lists the source with the model line marked', async () => {
    const s = new DebugSession({ ...COUNT, completer: new OracleCompleter(COUNT.trace), direction: 'forward', verify: false });
    for (const c of ['s', 's', 's']) await s.execute(c);
    const l = (await s.execute('l')).output;
    expect(l).toHaveLength(8);
    expect(l[1]).toBe('2 ->     n = 0');
    expect(l[0]).toBe('1    def count(s, t):');
  });
});

describe('DebugSession errors', () => {
  const session = (direction: Direction) =>
    new DebugSession({ ...COUNT, completer: new OracleCompleter(COUNT.trace), direction, verify: true });

  it('names unknown commands, commands of the other direction and bad arguments', async () => {
    const fwd = session('forward');
    expect((await fwd.execute('xyz')).output).toEqual(['*** Unknown command "xyz"; h lists the commands']);
    expect((await fwd.execute('rs')).output).toEqual([
      '*** "rs" (inv_step_into) is an inverse command; start the session with --inverse to step backwards',
    ]);
    expect((await fwd.execute('s 3')).output).toEqual(['*** "s" takes no argument']);
    const inv = session('inverse');
    expect((await inv.execute('n')).output).toEqual(['*** "n" (step_over) is a forward command; this is an inverse session: use rs, rn or rc']);
    expect((await inv.execute('b 2')).output[0]).toMatch(/^\*\*\* "b" \(breakpoint\) is a forward command/);
  });

  it('refuses breakpoints that are not statements', async () => {
    const s = session('forward');
    expect((await s.execute('b 6')).output).toEqual(['*** Line 6 is not a statement inside a function (blank); no line event stops there']);
    expect((await s.execute('b 1')).output).toEqual([
      '*** Line 1 is not a statement inside a function ("def count(s, t):"); no line event stops there',
    ]);
    expect((await s.execute('b 40')).output).toEqual(['*** Line 40 is out of range (the source has 8 lines; l lists it)']);
    expect((await s.execute('b x = 1')).output).toEqual(['*** No statement line reads "x = 1" (l lists the source)']);
    expect((await s.execute('b')).output[0]).toMatch(/^\*\*\* b needs a line number/);
    // nothing moved
    expect((await s.execute('s')).output).toEqual(['> line 8 in main: return count("berry", "r")    {}   [=]']);
  });

  it('refuses steps after the program exited, but still lists and quits', async () => {
    const s = session('forward');
    await s.execute('c');
    expect((await s.execute('n')).output).toEqual(['*** The program has exited; there is nothing to step (l, p, h still work; q quits)']);
    expect((await s.execute('p')).output).toEqual(['*** The program has exited; there are no locals']);
    expect((await s.execute('l')).output).toHaveLength(8);
    expect(await s.execute('q')).toEqual({ output: [], quit: true });
  });

  it('repeats the last command on an empty line, like pdb', async () => {
    const s = new DebugSession({ ...COUNT, completer: new OracleCompleter(COUNT.trace), direction: 'forward', verify: false });
    await s.execute('s');
    expect((await s.execute('')).output).toEqual(["> line 1 in count [call]: def count(s, t):    {'s': 'berry', 't': 'r'}"]);
  });

  it('needs the real run for inverse and verifying sessions', () => {
    const completer = new OracleCompleter(COUNT.trace);
    expect(() => new DebugSession({ code: COUNT.code, call: COUNT.call, completer, direction: 'inverse', verify: false })).toThrow(/inverse session needs the real run/);
    expect(() => new DebugSession({ code: COUNT.code, call: COUNT.call, completer, direction: 'forward', verify: true })).toThrow(/verifying session needs/);
  });

  it('starts a forward session without any run (the model alone)', async () => {
    const s = new DebugSession({ code: COUNT.code, call: COUNT.call, completer: new OracleCompleter(COUNT.trace), direction: 'forward', verify: false });
    expect(s.start()[1]).toBe('> line 7 in main [call]: def main():    {}');
    expect((await s.execute('s')).output).toEqual(['> line 8 in main: return count("berry", "r")    {}']);
  });
});

describe('DebugSession with a wrong model', () => {
  const opts = (completer: TextCompleter, verify = true): DebugSessionOptions => ({ ...COUNT, completer, direction: 'forward', verify });

  it('marks a wrong SRC, and only that step', async () => {
    const completer = new CorruptingCompleter(COUNT.trace, (t, step) => (step === 2 ? t.replace('    n = 0', '    n = 1') : t));
    const out = stops(await transcript(opts(completer), 's;s;s;s;s'));
    expect(out.map((l) => l.slice(l.lastIndexOf('   ') + 3))).toEqual(['[=]', '[=]', '[=]', '[≠ src]', '[=]', '[=]']);
    expect(out[3]).toBe("> line ? in ?: n = 1    {'s': 'berry', 't': 'r'}   [≠ src]");
  });

  it('marks wrong locals for as long as the model believes them', async () => {
    // the 4th step writes n = 0 at "for c in s:"; the model writes n = 7 and later deltas leave n out.
    const completer = new CorruptingCompleter(COUNT.trace, (t, step) => (step === 3 ? t.replace('"n": "0"', '"n": "7"') : t));
    const out = await transcript(opts(completer), 's;s;s;s;s;s;s;p n');
    const s = stops(out);
    expect(s[4]).toBe("> line 3 in count: for c in s:    {'s': 'berry', 't': 'r', 'n': 7}   [≠ locals]");
    expect(out).toContain("  real: > line 3 in count: for c in s:    {'s': 'berry', 't': 'r', 'n': 0}");
    for (const k of [5, 6, 7]) expect(s[k]).toMatch(/\[≠ locals\]$/); // n = 7 carried over by the deltas
    expect(out.slice(-2)).toEqual(['n = 7', '  real: n = 0   [≠]']);
  });

  it('marks a wrong event and value', async () => {
    const completer = new CorruptingCompleter(COUNT.trace, (t) =>
      t.replace('<|return_sep|>', '<|exception_sep|>').replace('"2"', '"3"'),
    );
    const out = stops(await transcript(opts(completer), 's;s;b 5;s'));
    expect(out[4]).toBe('> line 5 in count [exception]: return n    -> 3   [≠ evt, value]');
  });

  it('marks an early exit, and a frame where the program really ended', async () => {
    const early = new CorruptingCompleter(COUNT.trace, (t, step) => (step === 1 ? '<|frame_sep|><|exit_error|>' : t));
    const out = await transcript(opts(early), 's;s;s');
    expect(out.slice(4)).toEqual([
      '(ndbg) s',
      '--Exit-- an uncaught exception left the entry function (exit_error)   [≠ exit]',
      "  real: > line 1 in count [call]: def count(s, t):    {'s': 'berry', 't': 'r'}",
      '(ndbg) s',
      '*** The program has exited; there is nothing to step (l, p, h still work; q quits)',
    ]);
    const late = new CorruptingCompleter(COUNT.trace, (t) => (t === '' || t.includes('exit_normal') ? '<|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    n = 0<|action_sep|>' : t));
    const out2 = await transcript(opts(late), 'c;s');
    expect(out2.slice(3)).toEqual([
      '> line 2 in count: n = 0    {}   [≠ exit]',
      '  real: --Exit-- the program finished (exit_normal)',
      '(ndbg) s',
      '> line 2 in count: n = 0    {}   [≠ exit]',
      '  real: --Exit-- the program finished (exit_normal)',
    ]);
  });

  it('shows unreadable output raw; with --verify it goes on from the real state, without it stays at its stop', async () => {
    const garbage = new CorruptingCompleter(COUNT.trace, (t, step) => (step === 2 ? 'n = {{oops' : t));
    const out = await transcript(opts(garbage), 's;s;s;s');
    expect(out.slice(6, 12)).toEqual([
      '(ndbg) s',
      '*** The model\'s output does not parse: continuation: continuation must start with <|frame_sep|> (plain text would run on from the prefix) at offset 0',
      '    raw: "n = {{oops"',
      '    continuing from the real state',
      "> line 2 in count: n = 0    {'s': 'berry', 't': 'r'}   [real: not the model's]",
      '(ndbg) s',
    ]);
    expect(out[12]).toBe("> line 3 in count: for c in s:    {'s': 'berry', 't': 'r', 'n': 0}   [=]");

    // Without --verify the action is not taken: the document stays as it was, and the next
    // action goes on from the same stop.
    const again = new CorruptingCompleter(COUNT.trace, (t, step) => (step === 1 ? '<|frame_sep|><|line_sep|><|arg_sep|>{"n": <|src_sep|>x<|action_sep|>' : t));
    const session = new DebugSession(opts(again, false));
    session.start();
    await session.execute('s');
    const before = session.document;
    const failed = await session.execute('s');
    expect(failed.output).toEqual([
      expect.stringMatching(/^\*\*\* The model's output does not parse: continuation: bad LOCALS JSON/),
      '    raw: "<|frame_sep|><|line_sep|><|arg_sep|>{\\"n\\": <|src_sep|>x<|action_sep|>"',
      '*** The session stays at its stop (the action was not taken): try another action; q quits',
    ]);
    expect(session.document).toBe(before);
    expect(session.finished).toBe(false);
    expect((await session.execute('s')).output).toEqual(["> line 1 in count [call]: def count(s, t):    {'s': 'berry', 't': 'r'}"]);
    expect((await session.execute('n')).output).toEqual(["> line 2 in count: n = 0    {'s': 'berry', 't': 'r'}"]);
  });
});

describe('ProgramSource.locate', () => {
  const src = new ProgramSource('def f(a):\n    a.reverse()\n    for v in a:\n        a.pop()\n    a.reverse()\n    return a\n\ndef g():\n    a.reverse()\n');
  it('places a repeated line next to the previous stop, in the direction of execution', () => {
    expect(src.locate('    a.reverse()', false, { line: 3, func: 'f' }, false)).toEqual({ line: 5, func: 'f' });
    expect(src.locate('    a.reverse()', false, { line: 6, func: 'f' }, true)).toEqual({ line: 5, func: 'f' });
    expect(src.locate('    a.reverse()', false, { line: 4, func: 'f' }, true)).toEqual({ line: 2, func: 'f' });
    expect(src.locate('    a.reverse()', false, { line: 5, func: 'f' }, false)).toEqual({ line: 5, func: 'f' });
    expect(src.locate('    a.reverse()', false, { line: 8, func: 'g' }, false)).toEqual({ line: 9, func: 'g' });
    expect(src.locate('def g():', true, { line: 2, func: 'f' }, false)).toEqual({ line: 8, func: 'g' });
    expect(src.locate('    nope()', false, undefined, false)).toEqual({ func: '?' });
  });
});

describe('parameterNames', () => {
  it("reads a def line's parameters in the order Python's locals hold them", () => {
    // The code object's order: positional, keyword-only, then *args, then **kwargs.
    expect(parameterNames('def f(a, b=2, *args, c: int = 3, **kw):')).toEqual(['a', 'b', 'c', 'args', 'kw']);
    expect(parameterNames('    def g(self, /, x, *, y=","):')).toEqual(['self', 'x', 'y']);
    expect(parameterNames('def h():')).toEqual([]);
    expect(parameterNames('def k(x): return x')).toBeUndefined();
  });
});

describe('rebuildCall', () => {
  it('follows the signature: positional, *args, keyword-only, **kwargs, defaults with commas', () => {
    expect(rebuildCall('def g(a, b=(1, 2), *xs, k, **kw):', { a: '1', b: '(3, 4)', xs: '()', k: "'z'", kw: "{'q': 1}" })).toBe(
      "g(1, (3, 4), *(), k='z', **{'q': 1})",
    );
    expect(rebuildCall('def h(a, /, b, *, c=","):', { a: '1', b: '2', c: "'x'" })).toBe("h(1, 2, c='x')");
    expect(rebuildCall('def h(a):', {})).toBeUndefined();
  });
});

describe('ndbg debug (CLI)', () => {
  it('runs a scripted oracle session through the sandboxed tracer', () => {
    const out = execFileSync(
      process.execPath,
      [path.join(ROOT, 'bin', 'ndbg.js'), 'debug', path.join(FIXTURES, 'count.py'), '--call', 'count("berry", "r")', '--oracle', '--verify', '--script', 's;s;r;zz;q;s'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(out.split('\n')).toEqual([
      'ndbg debug: 8 lines, main calls count("berry", "r"); forward session, model: oracle, checked against the real run. h for help.',
      '> line 7 in main [call]: def main():    {}   [=]',
      '(ndbg) s',
      '> line 8 in main: return count("berry", "r")    {}   [=]',
      '(ndbg) s',
      "> line 1 in count [call]: def count(s, t):    {'s': 'berry', 't': 'r'}   [=]",
      '(ndbg) r',
      '> line 5 in count [return]: return n    -> 2   [=]',
      '(ndbg) zz',
      '*** Unknown command "zz"; h lists the commands',
      '(ndbg) q',
      '',
    ]);
  });

  it('reads commands from stdin with the (ndbg) prompt, and --script-file', () => {
    const dir = fs.mkdtempSync(path.join(require('os').tmpdir(), 'ndbg-debug-'));
    const script = path.join(dir, 'inv.txt');
    fs.writeFileSync(script, '# back to the arguments\nrc\n');
    const args = [path.join(ROOT, 'bin', 'ndbg.js'), 'debug', path.join(FIXTURES, 'count.py'), '--call', 'count("berry", "r")', '--oracle', '--inverse'];
    const scripted = execFileSync(process.execPath, [...args, '--script-file', script], { cwd: ROOT, encoding: 'utf8' });
    expect(scripted).toContain("(ndbg) rc\n> line 1 in count [inv_call]: def count(s, t):    {'s': 'berry', 't': 'r'}\n  call: count('berry', 'r')\n");
    const interactive = execFileSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8', input: 'rs\n\nq\n' });
    expect(interactive).toContain('(ndbg) > line 5 in count: return n    {...}\n(ndbg) > line 3 in count: for c in s:    {...}\n(ndbg) ');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('fails with one line for a missing file or a missing model', () => {
    const run = (args: string[]) => {
      try {
        execFileSync(process.execPath, [path.join(ROOT, 'bin', 'ndbg.js'), 'debug', ...args], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
        return { code: 0, stderr: '' };
      } catch (e) {
        const err = e as { status: number; stderr: string };
        return { code: err.status, stderr: err.stderr };
      }
    };
    expect(run(['nope.py', '--call', 'f(1)', '--oracle'])).toEqual({ code: 2, stderr: 'ndbg: nope.py: no such file\n' });
    expect(run([path.join(FIXTURES, 'count.py'), '--call', 'f(1)'])).toEqual({
      code: 2,
      stderr: 'ndbg: give --checkpoint DIR (a trained model) or --oracle (the true next states)\n',
    });
  });
});

/**
 * The model path of `ndbg debug`: a tiny randomly initialised model with the shipped tokenizer.
 * Its output is noise, so this checks the plumbing (encode the session's document, decode, read
 * or reject the frame, go on from the real state) and determinism, not accuracy.
 */
describe('DebugSession with a (tiny, random) model', () => {
  it('shows what the model wrote, goes on from the real state, and repeats itself for a seed', async () => {
    await initBackend('cpu', () => undefined);
    const tok = await Tokenizer.load(path.join(ROOT, 'tokenizer', 'ndbg-8k.model'));
    const config = resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 16, n_layers: 1, n_heads: 2, n_kv_heads: 1, d_ff: 32, max_seq_len: 256 });
    const model = LlamaModel.create(config, 7);
    const { code, trace } = COUNT;
    const prompts: string[] = [];
    // Without the frame grammar, so that the noise does not parse and the session's recovery runs.
    const run = async (seed: number, constrainFrame = false, maxNewTokens = 12) => {
      const model_ = new ModelCompleter(model, tok, { maxNewTokens, constrainFrame });
      const completer = { name: 'tiny', completeFrame: (prefix: string, o?: object) => (prompts.push(prefix), model_.completeFrame(prefix, o)) };
      const s = new DebugSession({ code, call: trace.entry_call, completer, trace, direction: 'forward', verify: true, sampling: { temperature: 1, topP: 1, seed } });
      const out = [...s.start()];
      for (const c of ['s', 's']) out.push(...(await s.execute(c)).output);
      return out;
    };
    const a = await run(1);
    const unreadable = /^\*\*\* The model's output does not parse: continuation: continuation must start with <\|frame_sep\|>/;
    expect(a.map((l) => (l.startsWith('    raw: ') ? 'RAW' : l.replace(unreadable, 'UNREADABLE')))).toEqual([
      'ndbg debug: 8 lines, main calls count("berry", "r"); forward session, model: tiny, checked against the real run. h for help.',
      '> line 7 in main [call]: def main():    {}   [=]',
      expect.stringMatching(/^UNREADABLE/),
      'RAW',
      '    continuing from the real state',
      '> line 8 in main: return count("berry", "r")    {}   [real: not the model\'s]',
      expect.stringMatching(/^UNREADABLE/),
      'RAW',
      '    continuing from the real state',
      "> line 1 in count [call]: def count(s, t):    {'s': 'berry', 't': 'r'}   [real: not the model's]",
    ]);
    for (const line of a.filter((l) => l.startsWith('    raw: '))) expect(JSON.parse(line.slice(9)).length).toBeGreaterThan(0);
    // The model was asked to continue its document, which went on from the real frame.
    expect(prompts[1].endsWith('<|frame_sep|><|line_sep|><|arg_sep|>{}<|src_sep|>    return count("berry", "r")<|action_sep|><|step_into|>')).toBe(true);
    expect(await run(1)).toEqual(a);
    // With the grammar (the default) the same noise comes out as frames the session can show
    // (with room for a line's SRC: after a call the flow rules leave only the first statement).
    for (const seed of [1, 2, 3]) {
      const grammar = await run(seed, true, 64);
      expect(grammar.filter((l) => l.includes('does not parse'))).toEqual([]);
      expect(grammar.filter((l) => l.startsWith('> ') || l.startsWith('--Exit--')).length).toBeGreaterThanOrEqual(2);
    }
    // An answer cut by the token limit is the one kind that still does not parse, and says so.
    // (A one-token exit fits in 4 tokens: of the seeds whose model wrote a frame, each says so.)
    const cuts = [];
    for (const seed of [1, 2, 3, 4, 5]) cuts.push(...(await run(seed, true, 4)).filter((l) => l.includes('does not parse')));
    expect(cuts.length).toBeGreaterThan(0);
    for (const line of cuts) expect(line).toMatch(/at end of text \(the answer stopped before its frame ended: raise --max-new-tokens\)$/);
    model.dispose();
  });
});

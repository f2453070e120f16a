import { Harness, COUNT, step, top, writeProgram } from './helpers';

/** `ndbg dap` in oracle mode (exact next states) on examples/count.py: the walkthrough of docs/dap.md. */
describe('ndbg dap, oracle mode', () => {
  const h = new Harness();
  beforeAll(() => h.start());
  afterAll(() => h.stop());

  test('capabilities are honest; the first stop is main calling the entry, stepIn enters it on its first body line', async () => {
    const { dc, init } = await h.launch({ program: COUNT, call: "count('berry', 'r')" });
    expect(init.body?.supportsStepBack).toBe(true);
    expect(init.body?.supportsConfigurationDoneRequest).toBe(true);
    expect(init.body?.supportsConditionalBreakpoints).toBe(false);
    const first = await top(dc);
    expect(first).toMatchObject({ name: 'main', line: 8, depth: 0, locals: {} });
    expect(first.sourceReference).toBe(1);
    const src = await dc.sourceRequest({ sourceReference: 1 });
    expect(src.body.content.split('\n')[7]).toBe("    return count('berry', 'r')");
    expect(await step(dc, () => dc.stepInRequest({ threadId: 1 }))).toBe('stopped');
    expect(await top(dc)).toMatchObject({ name: 'count', line: 2, path: COUNT, depth: 1, locals: { s: "'berry'", t: "'r'" } });
    await step(dc, () => dc.nextRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ line: 3, locals: { s: "'berry'", t: "'r'", n: '0' } });
    const ev = await dc.evaluateRequest({ expression: 'n', context: 'hover' });
    expect(ev.body.result).toBe('0');
    await expect(dc.evaluateRequest({ expression: 'n + 1', context: 'repl' })).rejects.toThrow(/bare local name/);
    await expect(dc.evaluateRequest({ expression: 'zz', context: 'repl' })).rejects.toThrow(/NameError.*zz/);
  });

  test('a breakpoint stops on its line each time; stepOut lands on the caller\'s line; stepBack walks back over shown stops; continue ends with exited + terminated', async () => {
    const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')" }, [4]);
    const bps = await dc.setBreakpointsRequest({ source: { path: COUNT }, breakpoints: [{ line: 4 }, { line: 1 }] });
    expect(bps.body.breakpoints.map((b) => b.verified)).toEqual([true, false]);
    await step(dc, () => dc.continueRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ name: 'count', line: 4, locals: { c: "'b'", n: '0' } });
    await step(dc, () => dc.continueRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ line: 4, locals: { c: "'e'", n: '0' } });
    await step(dc, () => dc.stepBackRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ line: 4, locals: { c: "'b'" } });
    // Forward again from the past: the session replays to this stop and goes on from it.
    await step(dc, () => dc.nextRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ line: 3, locals: { c: "'b'", n: '0' } });
    await step(dc, () => dc.reverseContinueRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ line: 4, locals: { c: "'b'" } });
    await dc.setBreakpointsRequest({ source: { path: COUNT }, breakpoints: [] });
    await step(dc, () => dc.stepOutRequest({ threadId: 1 }));
    const back = await top(dc);
    expect(back).toMatchObject({ name: 'main', line: 8, depth: 0 });
    const scopes = (await dc.scopesRequest({ frameId: (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0].id })).body.scopes;
    expect(scopes.map((s) => s.name)).toEqual(['Locals', 'Return value']);
    const exited = dc.waitForEvent('exited');
    expect(await step(dc, () => dc.continueRequest({ threadId: 1 }))).toBe('terminated');
    expect((await exited).body.exitCode).toBe(0);
    await expect(dc.nextRequest({ threadId: 1 })).rejects.toThrow(/exited/);
  });

  test('nested lists and dicts expand in the variables view', async () => {
    const file = writeProgram("def f(xs):\n    d = {'a': [1, 2], 'b': (3,)}\n    return len(xs) + len(d)\n");
    const { dc } = await h.launch({ program: file, call: 'f([[1, 2], [3]])' });
    await step(dc, () => dc.stepInRequest({ threadId: 1 }));
    await step(dc, () => dc.nextRequest({ threadId: 1 }));
    const frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
    const scope = (await dc.scopesRequest({ frameId: frame.id })).body.scopes[0];
    const vars = (await dc.variablesRequest({ variablesReference: scope.variablesReference })).body.variables;
    const d = vars.find((v) => v.name === 'd')!;
    expect(d.variablesReference).toBeGreaterThan(0);
    const items = (await dc.variablesRequest({ variablesReference: d.variablesReference })).body.variables;
    expect(items.map((v) => [v.name, v.value])).toEqual([["'a'", '[1, 2]'], ["'b'", '(3,)']]);
    const a = (await dc.variablesRequest({ variablesReference: items[0].variablesReference })).body.variables;
    expect(a.map((v) => [v.name, v.value])).toEqual([['[0]', '1'], ['[1]', '2']]);
  });

  test('an inverse launch starts at the real return and steps back: stepBack = inv_step_over, reverseContinue = inv_step_call; forward requests are refused', async () => {
    const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')", direction: 'inverse' });
    expect(await top(dc)).toMatchObject({ name: 'count', line: 5 });
    await expect(dc.nextRequest({ threadId: 1 })).rejects.toThrow(/inverse session/);
    // inv_step_over from the return: the state before `return n` ran, then the loop's last test.
    await step(dc, () => dc.stepBackRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ name: 'count', line: 5, locals: { n: '2' } });
    await step(dc, () => dc.stepBackRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ name: 'count', line: 3 });
    await step(dc, () => dc.reverseContinueRequest({ threadId: 1 }));
    expect(await top(dc)).toMatchObject({ name: 'count', line: 1, locals: { s: "'berry'", t: "'r'" } });
    expect(await step(dc, () => dc.stepBackRequest({ threadId: 1 }))).toBe('terminated');
  });
});

describe('ndbg dap, bad input', () => {
  const h = new Harness();
  beforeAll(() => h.start());
  afterAll(() => h.stop());

  const launchError = async (args: Record<string, unknown>): Promise<string> => {
    const dc = await h.client();
    await dc.initializeRequest({ adapterID: 'ndbg', pathFormat: 'path' });
    return dc.launchRequest(args as never).then(
      () => 'no error',
      (e: Error) => e.message,
    );
  };

  test.each([
    [{ call: 'f(1)' }, /launch: "program" is required/],
    [{ program: COUNT }, /launch: "call" is required/],
    [{ program: '/nonexistent/x.py', call: 'f(1)' }, /"program" \/nonexistent\/x.py: no such file/],
    [{ program: COUNT, call: 'count' }, /"call" must be a call like f\(3\)/],
    [{ program: COUNT, call: 'count(1, 2)', temperature: -1 }, /"temperature"/],
    [{ program: COUNT, call: 'count(1, 2)', direction: 'sideways' }, /"direction"/],
    [{ program: COUNT, call: 'count(1, 2)', walkSteps: -1 }, /"walkSteps"/],
    [{ program: COUNT, call: 'count(1, 2)', checkpoint: '/nonexistent/ckpt' }, /"checkpoint" \/nonexistent\/ckpt: no such directory/],
    [{ program: COUNT, call: 'count(1,' }, /"call"/],
    // Beam search is the default for a checkpoint; asked for by name it is checked as before.
    [{ program: COUNT, call: 'count(1, 2)', beams: 2 }, /"temperature"\/"beams" need a "checkpoint"/],
    [{ program: COUNT, call: 'count(1, 2)', beams: 2, temperature: 0.5 }, /"beams" .* does not go with "temperature"/],
  ])('launch %j is one error naming the field', async (args, message) => {
    expect(await launchError(args)).toMatch(message);
  });

  test('a program that does not parse is reported against its file and line', async () => {
    const file = writeProgram('def f(x):\n    return x +\n');
    expect(await launchError({ program: file, call: 'f(1)' })).toMatch(/prog\.py.*line 2|prog\.py:2/);
  });

  test('an entry call that fails before entering the function is a clear error for an inverse launch', async () => {
    const file = writeProgram('def f(x):\n    return x\n');
    expect(await launchError({ program: file, call: 'f(undefined_name)', direction: 'inverse' })).toMatch(/never entered f|could not be traced/);
  });

  test('requests before launch are error responses, not crashes', async () => {
    const dc = await h.client();
    await dc.initializeRequest({ adapterID: 'ndbg', pathFormat: 'path' });
    await expect(dc.nextRequest({ threadId: 1 })).rejects.toThrow(/not running/);
    await expect(dc.stackTraceRequest({ threadId: 1 })).rejects.toThrow(/no stop/);
  });
});

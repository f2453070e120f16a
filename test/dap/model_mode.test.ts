import type { DebugProtocol } from '@vscode/debugprotocol';
import type { TextCompleter } from '../../src/eval/completer';
import { loadProgram, type LaunchConfig } from '../../src/dap/launch';
import { MAX_STEPS_PER_REQUEST } from '../../src/dap/requests';
import { COUNT, Harness, step, top } from './helpers';

/** Model mode with stand-in models: what a client sees when the model is wrong or unreadable. */
function withCompleter(make: (oracle: TextCompleter) => TextCompleter) {
  return async (config: LaunchConfig, cwd: string) => {
    const p = await loadProgram({ ...config, checkpoint: undefined }, cwd);
    return { ...p, oracle: false, completer: make(p.completer), label: 'stand-in' };
  };
}

function outputs(dc: { on(e: string, f: (e: DebugProtocol.OutputEvent) => void): unknown }): string[] {
  const lines: string[] = [];
  dc.on('output', (e) => lines.push(e.body.output));
  return lines;
}

describe('ndbg dap, model mode', () => {
  test('a wrong prediction: verify marks it in an output line and shows a (real) scope beside the predicted locals', async () => {
    // The oracle's frames with every `"n": "1"` turned into `"n": "5"`: wrong once n becomes 1.
    const h = new Harness();
    await h.start(withCompleter((o) => ({ name: 'wrong', completeFrame: async (p, opt) => (await o.completeFrame(p, opt)).replace('"n": "1"', '"n": "5"') })));
    try {
      const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')", verify: true }, [4]);
      const out = outputs(dc);
      await step(dc, () => dc.continueRequest({ threadId: 1 }));
      await step(dc, () => dc.continueRequest({ threadId: 1 }));
      await step(dc, () => dc.continueRequest({ threadId: 1 }));
      await step(dc, () => dc.continueRequest({ threadId: 1 }));
      const t = await top(dc);
      expect(t).toMatchObject({ line: 4, locals: { c: "'r'", n: '5' } });
      const frame = (await dc.stackTraceRequest({ threadId: 1 })).body.stackFrames[0];
      const scopes = (await dc.scopesRequest({ frameId: frame.id })).body.scopes;
      expect(scopes.map((s) => s.name)).toEqual(['Locals (predicted)', '(real)']);
      const real = (await dc.variablesRequest({ variablesReference: scopes[1].variablesReference })).body.variables;
      expect(Object.fromEntries(real.map((v) => [v.name, v.value]))).toMatchObject({ n: '1', c: "'r'" });
      await new Promise((r) => setTimeout(r, 50));
      expect(out.some((l) => /\[=\] model: line 4 in count/.test(l))).toBe(true);
      expect(out.some((l) => /\[≠ locals\] model: line 4 in count.*'n': 5[\s\S]*real: line 4 in count.*'n': 1/.test(l))).toBe(true);
    } finally {
      await h.stop();
    }
  });

  test('a model that never reaches the stop: the request answers after the model-mode step limit instead of hanging', async () => {
    const h = new Harness();
    let calls = 0;
    let stuck: string | undefined;
    // After the first line frame in count, that frame again and again: a loop the model does not leave.
    await h.start(
      withCompleter((o) => ({
        name: 'looping',
        completeFrame: async (p, opt) => {
          calls++;
          if (stuck) return stuck;
          const text = await o.completeFrame(p, opt);
          if (text.includes('<|line_sep|>') && text.includes('n = 0')) stuck = text;
          return text;
        },
      })),
    );
    try {
      const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')" });
      const out = outputs(dc);
      await step(dc, () => dc.stepInRequest({ threadId: 1 }));
      await step(dc, () => dc.continueRequest({ threadId: 1 }));
      await new Promise((r) => setTimeout(r, 50));
      expect(out.join('')).toMatch(new RegExp(`gave up after ${MAX_STEPS_PER_REQUEST.model} NDL steps`));
      expect(calls).toBeLessThan(MAX_STEPS_PER_REQUEST.model + 10);
    } finally {
      await h.stop();
    }
  });

  test('unreadable model output without verify: an output event says so, the session stays at its stop, and a later step goes on from it', async () => {
    const h = new Harness();
    let calls = 0;
    await h.start(withCompleter((o) => ({ name: 'garbage', completeFrame: async (p, opt) => (++calls === 4 ? 'this is not NDL' : o.completeFrame(p, opt)) })));
    try {
      const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')" });
      const out = outputs(dc);
      await step(dc, () => dc.stepInRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 2 });
      const stopped = dc.waitForEvent('stopped');
      await dc.nextRequest({ threadId: 1 });
      expect((await stopped).body.reason).toBe('exception');
      expect(await top(dc)).toMatchObject({ name: 'count', line: 2 });
      expect(out.join('')).toMatch(/does not parse[\s\S]*raw: "this is not NDL"[\s\S]*"verify": true[\s\S]*stays at its stop/);
      // The model answers the same request now: the session had not moved.
      await step(dc, () => dc.nextRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 3, locals: { n: '0' } });
      // Walking back needs no prediction, and passes no stop for the request that was not taken.
      await step(dc, () => dc.stepBackRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 2 });
    } finally {
      await h.stop();
    }
  });

  test('unreadable output in the middle of a walk without verify: the stop is where the walk got to, and continuing goes on from there', async () => {
    const h = new Harness();
    let failed = false;
    // The first answer asked for once the model has written c = 'e' (the loop's second pass) does not parse.
    await h.start(
      withCompleter((o) => ({
        name: 'once',
        completeFrame: async (p, opt) => {
          if (!failed && p.includes('"c": "\'e\'"')) {
            failed = true;
            return 'this is not NDL';
          }
          return o.completeFrame(p, opt);
        },
      })),
    );
    try {
      // Two breakpoints: a continue walks single steps, so the failure comes in the middle of one.
      const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')" }, [2, 5]);
      await step(dc, () => dc.continueRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 2 });
      const stopped = dc.waitForEvent('stopped');
      await dc.continueRequest({ threadId: 1 });
      expect((await stopped).body.reason).toBe('exception');
      expect(await top(dc)).toMatchObject({ name: 'count', line: 4, locals: { c: "'e'" } });
      await step(dc, () => dc.continueRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 5, locals: { n: '2' } });
      // The stop the failed walk reached is one of the session's stops.
      await step(dc, () => dc.stepBackRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 4, locals: { c: "'e'" } });
    } finally {
      await h.stop();
    }
  });

  test('unreadable output with verify: the session goes on from the real state and says so', async () => {
    const h = new Harness();
    let calls = 0;
    await h.start(withCompleter((o) => ({ name: 'garbage', completeFrame: async (p, opt) => (++calls === 3 ? '<|line_sep|>garbage' : o.completeFrame(p, opt)) })));
    try {
      const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')", verify: true });
      const out = outputs(dc);
      await step(dc, () => dc.stepInRequest({ threadId: 1 }));
      await step(dc, () => dc.nextRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 3, locals: { n: '0' } });
      await step(dc, () => dc.nextRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 4 });
      expect(out.join('')).toMatch(/does not parse[\s\S]*continuing from the real state/);
    } finally {
      await h.stop();
    }
  });

  test('a session that outgrows the model\'s context is re-anchored: an output event says so and stepping goes on', async () => {
    const h = new Harness();
    // One "token" per character and a 400-token context: a few frames of count fill it. The
    // oracle cannot answer a re-anchored document (it is no walk of the real run), so with
    // verify the session goes on from the real state each time.
    await h.start(withCompleter((o) => ({ name: 'small', budget: { seqLen: 400, countTokens: (t: string) => t.length }, completeFrame: (p, opt) => o.completeFrame(p, opt) })));
    try {
      const { dc } = await h.launch({ program: COUNT, call: "count('berry', 'r')", verify: true });
      const out = outputs(dc);
      await step(dc, () => dc.stepInRequest({ threadId: 1 }));
      for (let i = 0; i < 6; i++) expect(await step(dc, () => dc.nextRequest({ threadId: 1 }))).toBe('stopped');
      expect(out.join('')).toMatch(/outgrew the model's context/);
      expect((await top(dc)).name).toBe('count');
    } finally {
      await h.stop();
    }
  });
});

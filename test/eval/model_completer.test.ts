import * as path from 'path';
import { initBackend } from '../../src/backend/backend';
import { LlamaModel } from '../../src/model/model';
import { resolveModelConfig } from '../../src/model/config';
import { nextFrameRoom } from '../../src/eval/budget';
import { walkedAnswers, walkJumps, WALKED_ACTIONS } from '../../src/eval/jump_walk';
import { ModelCompleter } from '../../src/eval/model_completer';
import { PromptTooLongError } from '../../src/eval/completer';
import { Tokenizer } from '../../src/tokenizer';

const ROOT = path.resolve(__dirname, '..', '..');

function prompt(body: string, call: string): string {
  const program = `def f(x):\n${body}\n\ndef main():\n    return f(${call})\n`;
  return `<|begin_of_text|><|trace_context_start|>${program}<|frame_sep|><|call_sep|><|src_sep|>def main():<|arg_sep|>{}<|action_sep|><|step_into|>`;
}

describe('ModelCompleter.completeFrames', () => {
  let tok: Tokenizer;
  let model: LlamaModel;
  beforeAll(async () => {
    await initBackend('wasm', () => undefined);
    tok = await Tokenizer.load(path.join(ROOT, 'tokenizer', 'ndbg-2k.model'));
    model = LlamaModel.create(resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 32, n_layers: 1, n_heads: 2, d_ff: 48, max_seq_len: 160, init_std: 0.5 }), 7);
  });
  afterAll(() => model.dispose());

  const prefixes = [
    prompt('    return x + 1', '1'),
    prompt('    y = [x, x * 2, x * 3]\n    for v in y:\n        x += v\n    return x', '12'),
    prompt('    return x', '"a"'),
    prompt('    s = str(x) * 3\n    return s.upper()', '"abc"'),
    prompt('    return {k: x for k in range(3)}', '0'),
  ];

  test('batches give, in order, what one prompt at a time gives, constrained or free, greedy or sampled, one beam or three', async () => {
    for (const constrainSrc of [true, false]) {
      for (const [batchSize, beams] of [[2, 1], [16, 1], [2, 3], [16, 3]]) {
        const c = new ModelCompleter(model, tok, { maxNewTokens: 24, constrainSrc, batchSize, beams });
        for (const options of [{}, { temperature: 1, seed: 3 }]) {
          const alone: string[] = [];
          for (const p of prefixes) alone.push(await c.completeFrame(p, options));
          expect(await c.completeFrames(prefixes, options)).toEqual(alone);
        }
      }
    }
  });

  test('a breakpoint is walked the same alone and in a batch, and names itself in the decoding; --walk-steps 0 answers in one shot', async () => {
    const toBreak = [
      prompt('    y = x * 2\n    z = y + 1\n    return z', '3').replace(/<\|step_into\|>$/, '<|breakpoint|>    return z'),
      prompt('    for v in [1, 2]:\n        x += v\n    return x', '1').replace(/<\|step_into\|>$/, '<|breakpoint|>        x += v'),
    ];
    for (const beams of [1, 3]) {
      const walked = new ModelCompleter(model, tok, { maxNewTokens: 24, batchSize: 2, beams });
      const oneShot = new ModelCompleter(model, tok, { maxNewTokens: 24, batchSize: 2, beams, walkSteps: 0 });
      expect(walked.decoding).toMatch(/breakpoints walked$/);
      expect(oneShot.decoding).not.toMatch(/walked/);
      const alone: string[] = [];
      for (const p of toBreak) alone.push(await walked.completeFrame(p));
      expect(await walked.completeFrames(toBreak)).toEqual(alone);
      const direct: string[] = [];
      for (const p of toBreak) direct.push(await oneShot.completeFrame(p));
      expect(await oneShot.completeFrames(toBreak)).toEqual(direct);
    }
  });

  test("a breakpoint's one-shot answer is decoded only where its walk gives none, with the answers of decoding every one first", async () => {
    const toBreak = [
      prompt('    y = x * 2\n    z = y + 1\n    return z', '3').replace(/<\|step_into\|>$/, '<|breakpoint|>    return z'),
      prompt('    for v in [1, 2]:\n        x += v\n    return x', '1').replace(/<\|step_into\|>$/, '<|breakpoint|>        x += v'),
    ];
    const mixed = [prefixes[0], ...toBreak, prefixes[1]];
    for (const walkSteps of [1, 3, 16]) {
      const oneShot = new ModelCompleter(model, tok, { maxNewTokens: 24, batchSize: 2, beams: 3, walkSteps: 0 });
      const walked = new ModelCompleter(model, tok, { maxNewTokens: 24, batchSize: 2, beams: 3, walkSteps });
      // The order before: every prompt's one-shot answer, then the walks over them.
      const before = await walkJumps(mixed, await oneShot.completeFrames(mixed), (ps) => oneShot.completeFrames(ps), walked.budget, {
        actions: WALKED_ACTIONS,
        maxSteps: walkSteps,
        answerRoom: nextFrameRoom(walked.budget),
      });
      const spy = jest.spyOn(ModelCompleter.prototype as unknown as { decodeFrames: (ps: string[]) => Promise<string[]> }, 'decodeFrames');
      try {
        expect(await walked.completeFrames(mixed)).toEqual(before);
        const decoded = spy.mock.calls.flatMap(([ps]) => ps);
        const fellBack = await walkedAnswers(toBreak, (ps) => oneShot.completeFrames(ps), walked.budget, {
          actions: WALKED_ACTIONS,
          maxSteps: walkSteps,
          answerRoom: nextFrameRoom(walked.budget),
        });
        // A breakpoint prompt itself is decoded (its one-shot answer) once per walk that gave no answer, never otherwise.
        expect(decoded.filter((p) => toBreak.includes(p)).length).toBe(fellBack.filter((a) => a === undefined).length);
        expect(decoded.filter((p) => p === prefixes[0] || p === prefixes[1])).toHaveLength(2);
      } finally {
        spy.mockRestore();
      }
    }
  });

  test('a prompt with no room left in the context is refused, as alone', async () => {
    const c = new ModelCompleter(model, tok, { maxNewTokens: 24 });
    const long = prompt(Array.from({ length: 40 }, (_, i) => `    x = x + ${i}`).join('\n') + '\n    return x', '0');
    await expect(c.completeFrames([prefixes[0], long])).rejects.toBeInstanceOf(PromptTooLongError);
    // A breakpoint's too, though its one-shot answer is decoded only if its walk gives none.
    const longBreak = long.replace(/<\|step_into\|>$/, '<|breakpoint|>    return x');
    await expect(c.completeFrames([prefixes[0], longBreak])).rejects.toBeInstanceOf(PromptTooLongError);
    await expect(c.completeFrame(longBreak)).rejects.toBeInstanceOf(PromptTooLongError);
  });
});

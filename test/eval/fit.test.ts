import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { initBackend } from '../../src/backend/backend';
import { resolveModelConfig } from '../../src/model/config';
import { LlamaModel } from '../../src/model/model';
import { answerRoom, fitsPrompt, fitsRow, longestRow } from '../../src/eval/budget';
import { CompleterPredictor, PromptTooLongError, type PromptBudget, type TextCompleter } from '../../src/eval/completer';
import { ModelCompleter } from '../../src/eval/model_completer';
import { evaluateNextState, formatTables, nextStateReport } from '../../src/eval/next_state';
import { OracleCompleter } from '../../src/eval/oracle_completer';
import { DebugSession } from '../../src/eval/session';
import { loadModelCompleter } from '../../src/eval/load';
import { copyProbeOf } from '../../src/eval/copy_probe';
import { sessionAnswerRoom } from '../../src/eval/session';
import { ALL_ACTIONS, fitsBudget, makeTasks } from '../../src/eval/tasks';
import { writeModelCheckpoint } from '../../src/model/checkpoint';
import { formatAction } from '../../src/ndl/format';
import { DOCUMENT_TOKENS, STRUCTURE_TOKENS } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';
import { traceInProcess } from '../../src/trace/inprocess';
import type { TraceRecord } from '../../src/trace/types';
import { fixtureTraces } from './helpers';

const ROOT = path.resolve(__dirname, '..', '..');

/** A program whose context alone is long: 40 assignments before the loop. */
function longProgram(): TraceRecord {
  const body = Array.from({ length: 40 }, (_, i) => `    v${i} = n + ${i}`).join('\n');
  const code = `def f(n):\n${body}\n    total = 0\n    for i in range(n):\n        total += i\n    return total`;
  return traceInProcess([{ id: 'long', code, input: '3' }])[0];
}

/** The oracle with a context: it answers truthfully but records every prompt it was given. */
class BudgetedOracle implements TextCompleter {
  readonly name = 'oracle';
  readonly prompts: string[] = [];
  private readonly inner: OracleCompleter;
  constructor(traces: TraceRecord[], readonly budget: PromptBudget) {
    this.inner = new OracleCompleter(new Map(traces.map((t) => [t.id, t])));
  }
  async completeFrame(prefix: string): Promise<string> {
    this.prompts.push(prefix);
    // Refuses as the model completer does: through the one rule (budget.ts answerRoom).
    const tokens = this.budget.countTokens(prefix);
    if (answerRoom(this.budget, tokens) < 1) throw new PromptTooLongError(tokens, this.budget.seqLen);
    return this.inner.completeFrame(prefix);
  }
}

describe('honest prompts', () => {
  let tok: Tokenizer;
  beforeAll(async () => {
    tok = await Tokenizer.load(path.join(ROOT, 'tokenizer', 'ndbg-2k.model'));
  });

  it('never cuts a prompt: long programs are counted as did_not_fit, in the tables and the JSON', async () => {
    const traces = [...fixtureTraces(), longProgram()];
    const budget: PromptBudget = { seqLen: 160, countTokens: (t) => tok.encodeIds(t).length };
    const longContext = budget.countTokens(traces[traces.length - 1].code);
    expect(longContext).toBeGreaterThan(budget.seqLen); // the long program cannot fit at all
    const { tasks, didNotFit } = makeTasks(traces, ALL_ACTIONS, { seed: 0, perProgram: 2, budget });
    expect(tasks.some((t) => t.traceId === 'long')).toBe(false);
    expect(Object.values(didNotFit).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(ALL_ACTIONS.length);
    const oracle = new BudgetedOracle(traces, budget);
    const result = await evaluateNextState(tasks, [new CompleterPredictor(oracle)], { quiet: true, didNotFit });
    // Every prompt holds the whole document start (program context included) and fits with its answer.
    for (const p of oracle.prompts) {
      expect(p.startsWith(DOCUMENT_TOKENS.begin + STRUCTURE_TOKENS.traceContextStart)).toBe(true);
      expect(answerRoom(budget, budget.countTokens(p))).toBeGreaterThanOrEqual(1);
    }
    expect(result.tables.oracle.all.full).toBe(1); // what is scored is scored right
    expect(result.tables.oracle.all.didNotFit).toBe(Object.values(didNotFit).reduce((a, b) => a + b, 0));
    expect(formatTables(result.tables)).toMatch(/no-fit/);
    const json = nextStateReport(result, 'oracle', { programs: traces.length, tasks: tasks.length }) as { did_not_fit: Record<string, number> };
    expect(json.did_not_fit.all).toBeGreaterThanOrEqual(ALL_ACTIONS.length);
  });

  it('counts a task whose true answer is longer than the completer writes as did_not_fit, not as an error', () => {
    const countTokens = (t: string) => tok.encodeIds(t).length;
    const roomy = makeTasks(fixtureTraces(), ['step_into'], { seed: 0, perProgram: 4, budget: { seqLen: 4096, countTokens, maxAnswerTokens: 4096 } });
    const longest = Math.max(...roomy.tasks.map((t) => (t.truth.frame ? countTokens(JSON.stringify(t.truth.frame.locals ?? t.truth.frame.value ?? '')) : 0)));
    expect(longest).toBeGreaterThan(8);
    const short = makeTasks(fixtureTraces(), ['step_into'], { seed: 0, perProgram: 4, budget: { seqLen: 4096, countTokens, maxAnswerTokens: 8 } });
    expect(short.didNotFit.step_into).toBeGreaterThan(0);
    expect(short.didNotFit.step_into ?? 0).toBeGreaterThan(roomy.didNotFit.step_into ?? 0);
    // The model completer's budget carries its maxNewTokens.
    expect(new ModelCompleter({ config: { max_seq_len: 64 } } as never, tok, { maxNewTokens: 24 }).budget.maxAnswerTokens).toBe(24);
  });

  it('draws prefixes over the whole trajectory that fits, not only its first frames', () => {
    const budget: PromptBudget = { seqLen: 4096, countTokens: (t) => tok.encodeIds(t).length };
    const { tasks } = makeTasks(fixtureTraces(), ['step_into', 'inv_step_into'], { seed: 0, perProgram: 20, budget });
    const frames = tasks.map((t) => t.prefix.split(STRUCTURE_TOKENS.frameSep).length - 1);
    expect(Math.max(...frames)).toBeGreaterThan(8); // the old cap was 6 prefix frames
  });

  it('the model completer refuses a prompt that does not fit instead of cutting it', async () => {
    await initBackend('cpu', () => undefined);
    const config = resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 16, n_layers: 1, n_heads: 2, n_kv_heads: 1, d_ff: 32, max_seq_len: 64 });
    const model = LlamaModel.create(config, 1);
    const completer = new ModelCompleter(model, tok, { maxNewTokens: 8 });
    const long = longProgram();
    const prompt = DOCUMENT_TOKENS.begin + STRUCTURE_TOKENS.traceContextStart + long.code + STRUCTURE_TOKENS.frameSep;
    await expect(completer.completeFrame(prompt)).rejects.toBeInstanceOf(PromptTooLongError);
    expect(completer.budget.seqLen).toBe(64);
    model.dispose();
  });

  it('the REPL continues a session that outgrows the context from a new document of the trained form', async () => {
    const trace = fixtureTraces().find((t) => t.id === 'ev-loop') as TraceRecord;
    const budget: PromptBudget = { seqLen: 200, countTokens: (t) => tok.encodeIds(t).length };
    const oracle = new BudgetedOracle([trace], budget);
    const session = new DebugSession({ code: trace.code, call: trace.entry_call, completer: oracle, trace, direction: 'forward', verify: true });
    session.start();
    const out: string[] = [];
    for (let i = 0; i < 30 && !session.finished; i++) out.push(...(await session.execute('s')).output);
    expect(out.some((l) => l.startsWith("*** The session outgrew the model's context"))).toBe(true);
    for (const p of oracle.prompts) expect(answerRoom(budget, budget.countTokens(p))).toBeGreaterThanOrEqual(1);
    // The new document holds the program, main's call and a breakpoint jump to the current line.
    const doc = session.document;
    expect(doc.startsWith(DOCUMENT_TOKENS.begin + STRUCTURE_TOKENS.traceContextStart + trace.code.replace(/\n+$/, ''))).toBe(true);
    expect(doc).toContain('def main():<|arg_sep|>{}<|action_sep|><|breakpoint|>');
    expect(out.filter((l) => /\[≠/.test(l))).toEqual([]); // the oracle stays right across the re-anchoring
  });
});

/**
 * Every "does it fit?" of the eval is asked of src/eval/budget.ts: each test puts one decision
 * at the edge of the rule (a sequence fits when it is at most one training row, T+1 tokens)
 * and fails if that decision is made some other way.
 */
describe('one fit rule (budget.ts)', () => {
  let tok: Tokenizer;
  beforeAll(async () => {
    tok = await Tokenizer.load(path.join(ROOT, 'tokenizer', 'ndbg-2k.model'));
    await initBackend('cpu', () => undefined);
  });
  /** A budget counting characters, so the edges are exact. */
  const chars = (seqLen: number, maxAnswerTokens?: number): PromptBudget => ({ seqLen, countTokens: (t) => t.length, maxAnswerTokens });

  it('a sequence fits when it is at most one training row: T+1 tokens, the last only a target', () => {
    expect(fitsRow({ seqLen: 10 }, 11)).toBe(true);
    expect(fitsRow({ seqLen: 10 }, 12)).toBe(false);
    expect(answerRoom({ seqLen: 10 }, 10)).toBe(1);
    expect(longestRow({ seqLen: 10 })).toBe(11);
    expect(fitsPrompt(chars(10), 'abcdefgh', 3)).toBe(true);
    expect(fitsPrompt(chars(10), 'abcdefgh', 4)).toBe(false);
  });

  it('next-state tasks and CruxEval (fitsBudget): prompt and true answer, by the rule', () => {
    for (const n of [1, 5, 8, 9]) {
      for (const T of [8, 9, 10, 11, 12]) expect(fitsBudget('p'.repeat(n), 'abc', chars(T))).toBe(fitsRow({ seqLen: T }, n + 3));
    }
    expect(fitsBudget('p', 'abcd', chars(100, 3))).toBe(false); // longer than the completer writes
  });

  it('the REPL re-anchors exactly when the next prompt leaves less than its answer room', async () => {
    const trace = fixtureTraces().find((t) => t.id === 'ev-loop') as TraceRecord;
    let reanchored = 0;
    let atEdge = 0;
    // Several contexts, so that some step lands exactly on the rule's edge.
    for (let seqLen = 190; seqLen <= 214; seqLen++) {
      const budget: PromptBudget = { seqLen, countTokens: (t) => tok.encodeIds(t).length };
      const session = new DebugSession({ code: trace.code, call: trace.entry_call, completer: new BudgetedOracle([trace], budget), trace, direction: 'forward', verify: true });
      session.start();
      for (let i = 0; i < 30 && !session.finished; i++) {
        const next = session.document + formatAction({ kind: 'step_into' });
        const expected = !fitsPrompt(budget, next, sessionAnswerRoom(budget));
        if (!expected && !fitsPrompt(budget, next, sessionAnswerRoom(budget) + 1)) atEdge++;
        const out = (await session.execute('s')).output;
        expect(out.some((l) => l.startsWith("*** The session outgrew the model's context"))).toBe(expected);
        if (expected) reanchored++;
      }
    }
    expect(reanchored).toBeGreaterThan(0);
    expect(atEdge).toBeGreaterThan(0);
  });

  it('the model completer (and so horizon) refuses a prompt exactly when answerRoom < 1, at the trained context', async () => {
    const model = LlamaModel.create(resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 16, n_layers: 1, n_heads: 2, n_kv_heads: 1, d_ff: 32, max_seq_len: 64 }), 1);
    const completer = new ModelCompleter(model, tok, { maxNewTokens: 8, constrainSrc: false, seqLen: 32 });
    const prompt = (n: number) => STRUCTURE_TOKENS.frameSep.repeat(n);
    expect(tok.encodeIds(prompt(33)).length).toBe(33);
    await expect(completer.completeFrame(prompt(32))).resolves.toEqual(expect.any(String)); // room 1
    await expect(completer.completeFrame(prompt(33))).rejects.toBeInstanceOf(PromptTooLongError);
    expect(answerRoom(completer.budget, 33)).toBe(0);
    model.dispose();
  });

  it('the copy probe sizes its rows by the rule, at the context it is given', () => {
    const model = LlamaModel.create(resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 16, n_layers: 1, n_heads: 2, n_kv_heads: 1, d_ff: 32, max_seq_len: 32 }), 1);
    for (const seqLen of [32, 31, 20]) {
      const { length } = copyProbeOf(model, tok, { sequences: 1, length: 48 }, seqLen);
      expect(fitsRow({ seqLen }, 1 + 2 * length)).toBe(true);
      expect(fitsRow({ seqLen }, 1 + 2 * (length + 1))).toBe(false);
    }
    model.dispose();
  });

  it("eval fits prompts to the context a checkpoint was trained at (config.json seq_len), else max_seq_len", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-fit-'));
    const config = resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 16, n_layers: 1, n_heads: 2, n_kv_heads: 1, d_ff: 32, max_seq_len: 64 });
    const model = LlamaModel.create(config, 1);
    const tokenizerFile = path.join(ROOT, 'tokenizer', 'ndbg-2k.model');
    writeModelCheckpoint(path.join(dir, 'trained'), config, model.getWeights(), { extraConfig: { seq_len: 48 }, tokenizerFile });
    writeModelCheckpoint(path.join(dir, 'older'), config, model.getWeights(), { tokenizerFile });
    model.dispose();
    const trained = await loadModelCompleter({ checkpoint: path.join(dir, 'trained'), backend: 'cpu' });
    const older = await loadModelCompleter({ checkpoint: path.join(dir, 'older'), backend: 'cpu' });
    expect(trained.budget.seqLen).toBe(48);
    expect(older.budget.seqLen).toBe(64);
    trained.model.dispose();
    older.model.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

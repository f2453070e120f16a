import * as path from 'path';
import { initBackend } from '../../src/model/backend';
import { resolveModelConfig } from '../../src/model/config';
import { LlamaModel } from '../../src/model/model';
import { CompleterPredictor, PromptTooLongError, type PromptBudget, type TextCompleter } from '../../src/eval/completer';
import { ModelCompleter } from '../../src/eval/model_completer';
import { evaluateNextState, formatTables, nextStateReport } from '../../src/eval/next_state';
import { OracleCompleter } from '../../src/eval/oracle_completer';
import { DebugSession } from '../../src/eval/session';
import { ALL_ACTIONS, makeTasks } from '../../src/eval/tasks';
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
    if (this.budget.countTokens(prefix) >= this.budget.maxSeqLen) throw new PromptTooLongError(this.budget.countTokens(prefix), this.budget.maxSeqLen);
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
    const budget: PromptBudget = { maxSeqLen: 160, countTokens: (t) => tok.encodeIds(t).length };
    const longContext = budget.countTokens(traces[traces.length - 1].code);
    expect(longContext).toBeGreaterThan(budget.maxSeqLen); // the long program cannot fit at all
    const { tasks, didNotFit } = makeTasks(traces, ALL_ACTIONS, { seed: 0, perProgram: 2, budget });
    expect(tasks.some((t) => t.traceId === 'long')).toBe(false);
    expect(Object.values(didNotFit).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(ALL_ACTIONS.length);
    const oracle = new BudgetedOracle(traces, budget);
    const result = await evaluateNextState(tasks, [new CompleterPredictor(oracle)], { quiet: true, didNotFit });
    // Every prompt holds the whole document start (program context included) and fits with its answer.
    for (const p of oracle.prompts) {
      expect(p.startsWith(DOCUMENT_TOKENS.begin + STRUCTURE_TOKENS.traceContextStart)).toBe(true);
      expect(budget.countTokens(p)).toBeLessThan(budget.maxSeqLen);
    }
    expect(result.tables.oracle.all.full).toBe(1); // what is scored is scored right
    expect(result.tables.oracle.all.didNotFit).toBe(Object.values(didNotFit).reduce((a, b) => a + b, 0));
    expect(formatTables(result.tables)).toMatch(/no-fit/);
    const json = nextStateReport(result, 'oracle', { programs: traces.length, tasks: tasks.length }) as { did_not_fit: Record<string, number> };
    expect(json.did_not_fit.all).toBeGreaterThanOrEqual(ALL_ACTIONS.length);
  });

  it('counts a task whose true answer is longer than the completer writes as did_not_fit, not as an error', () => {
    const countTokens = (t: string) => tok.encodeIds(t).length;
    const roomy = makeTasks(fixtureTraces(), ['step_into'], { seed: 0, perProgram: 4, budget: { maxSeqLen: 4096, countTokens, maxAnswerTokens: 4096 } });
    const longest = Math.max(...roomy.tasks.map((t) => (t.truth.frame ? countTokens(JSON.stringify(t.truth.frame.locals ?? t.truth.frame.value ?? '')) : 0)));
    expect(longest).toBeGreaterThan(8);
    const short = makeTasks(fixtureTraces(), ['step_into'], { seed: 0, perProgram: 4, budget: { maxSeqLen: 4096, countTokens, maxAnswerTokens: 8 } });
    expect(short.didNotFit.step_into).toBeGreaterThan(0);
    expect(short.didNotFit.step_into ?? 0).toBeGreaterThan(roomy.didNotFit.step_into ?? 0);
    // The model completer's budget carries its maxNewTokens.
    expect(new ModelCompleter({ config: { max_seq_len: 64 } } as never, tok, { maxNewTokens: 24 }).budget.maxAnswerTokens).toBe(24);
  });

  it('draws prefixes over the whole trajectory that fits, not only its first frames', () => {
    const budget: PromptBudget = { maxSeqLen: 4096, countTokens: (t) => tok.encodeIds(t).length };
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
    expect(completer.budget.maxSeqLen).toBe(64);
    model.dispose();
  });

  it('the REPL continues a session that outgrows the context from a new document of the trained form', async () => {
    const trace = fixtureTraces().find((t) => t.id === 'ev-loop') as TraceRecord;
    const budget: PromptBudget = { maxSeqLen: 200, countTokens: (t) => tok.encodeIds(t).length };
    const oracle = new BudgetedOracle([trace], budget);
    const session = new DebugSession({ code: trace.code, call: trace.entry_call, completer: oracle, trace, direction: 'forward', verify: true });
    session.start();
    const out: string[] = [];
    for (let i = 0; i < 30 && !session.finished; i++) out.push(...(await session.execute('s')).output);
    expect(out.some((l) => l.startsWith("*** The session outgrew the model's context"))).toBe(true);
    for (const p of oracle.prompts) expect(budget.countTokens(p)).toBeLessThan(budget.maxSeqLen);
    // The new document holds the program, main's call and a breakpoint jump to the current line.
    const doc = session.document;
    expect(doc.startsWith(DOCUMENT_TOKENS.begin + STRUCTURE_TOKENS.traceContextStart + trace.code.replace(/\n+$/, ''))).toBe(true);
    expect(doc).toContain('def main():<|arg_sep|>{}<|action_sep|><|breakpoint|>');
    expect(out.filter((l) => /\[≠/.test(l))).toEqual([]); // the oracle stays right across the re-anchoring
  });
});

import { DEFAULT_WALK_STEPS, walkedAnswers, walkJumps, type JumpWalkOptions } from '../../src/eval/jump_walk';
import { readPrediction } from '../../src/eval/completer';
import { OracleCompleter } from '../../src/eval/oracle_completer';
import { scorePrediction } from '../../src/eval/score';
import { makeTasks } from '../../src/eval/tasks';
import type { NextStateTask } from '../../src/eval/types';
import { MAIN_CALL_FRAME } from '../../src/ndl/format';
import { parseDocument } from '../../src/ndl/parse';
import type { ActionKind } from '../../src/ndl/tokens';
import { defaultProgramsConfig, generateProgram } from '../../src/programs/index';
import { traceInProcess } from '../../src/trace/inprocess';
import { fixtureTraces } from './helpers';

const JUMPS: ActionKind[] = ['breakpoint', 'step_over', 'step_return', 'inv_step_over', 'inv_step_call'];
/** A context no fixture prompt comes near: only the step limit and the loop rule end a walk. */
const ROOMY = { seqLen: 1 << 20, countTokens: (text: string) => text.length };
const options = (o: Partial<JumpWalkOptions> = {}): JumpWalkOptions => ({ actions: JUMPS, maxSteps: 1000, answerRoom: 64, ...o });

describe('walked jumps (jump_walk.ts)', () => {
  const traces = fixtureTraces();
  const oracle = new OracleCompleter(new Map(traces.map((t) => [t.id, t])));
  const oracleSteps = (prompts: string[]) => Promise.all(prompts.map((p) => oracle.completeFrame(p)));
  const { tasks } = makeTasks(traces, JUMPS, { seed: 5, perProgram: 3, maxPrefixFrames: 12 });
  const full = (task: NextStateTask, answer: string) => scorePrediction(readPrediction(task.prefix, answer), task.truth).full;

  /**
   * Where a walk leaves the one-shot answer by design: step_return from a return frame (one step,
   * the caller's next event), and an answer whose delta has a base no frame shows (the truth is
   * itself inexact: the locals at an inverse return).
   */
  const oneShotByDesign = (task: NextStateTask) => {
    const frames = parseDocument(task.prefix).frames;
    const from = frames[frames.length - 1];
    return (task.action.kind === 'step_return' && from.event === 'return') || task.truth.frame?.exact === false;
  };
  /** Inexact truths are still answered when the jump is one step (the step's own text). */
  const oneStep = (task: NextStateTask) => task.truth.frame?.exact === false;

  it('walked with the true single steps, answers every jump exactly as the jump itself (all five actions, both directions)', async () => {
    const wrong = tasks.map(() => '<|frame_sep|>not a frame');
    let overs = 0;
    const counting = (prompts: string[]) => ((overs += prompts.filter((p) => p.endsWith('<|step_over|>')).length), oracleSteps(prompts));
    const answers = await walkJumps(tasks.map((t) => t.prefix), wrong, counting, ROOMY, options());
    // Breakpoint walks step over the calls that cannot reach their target (program_calls.ts).
    expect(overs).toBeGreaterThan(0);
    const byAction = new Map<string, number>();
    tasks.forEach((t, i) => {
      const kept = oneShotByDesign(t) && !(oneStep(t) && full(t, answers[i]));
      const expected = kept ? { answer: wrong[i] } : { right: true };
      const got = kept ? { answer: answers[i] } : { right: full(t, answers[i]) };
      expect({ id: t.id, ...got }).toEqual({ id: t.id, ...expected });
      if (!oneShotByDesign(t)) byAction.set(t.action.kind, (byAction.get(t.action.kind) ?? 0) + 1);
    });
    for (const kind of JUMPS) expect(byAction.get(kind) ?? 0).toBeGreaterThan(0);
    // Many of them several steps long, through calls, returns and an exception caught in the caller.
    expect(tasks.filter((t) => t.id.startsWith('ev-exc/') && t.action.kind === 'breakpoint' && !oneShotByDesign(t)).length).toBeGreaterThan(0);
  });

  it('stepping over calls never misses a breakpoint: oracle walks on 80 generated programs reproduce every answer they give', async () => {
    const programs = Array.from({ length: 80 }, (_, i) => generateProgram(11, i, defaultProgramsConfig().generator)).map((g) => ({
      id: g.id,
      code: g.code,
      input: g.inputs[0],
    }));
    const generated = traceInProcess(programs).filter((t) => t.events.length > 0);
    const gOracle = new OracleCompleter(new Map(generated.map((t) => [t.id, t])));
    const bp = makeTasks(generated, ['breakpoint'], { seed: 2, perProgram: 4 }).tasks;
    let overs = 0;
    const steps = (prompts: string[]) => ((overs += prompts.filter((p) => p.endsWith('<|step_over|>')).length), Promise.all(prompts.map((p) => gOracle.completeFrame(p))));
    const answers = await walkJumps(bp.map((t) => t.prefix), bp.map(() => 'kept'), steps, ROOMY, options({ actions: ['breakpoint'] }));
    const wrong = bp.filter((t, i) => answers[i] !== 'kept' && !full(t, answers[i])).map((t) => t.id);
    expect(wrong).toEqual([]);
    expect(answers.filter((a) => a !== 'kept').length).toBeGreaterThan(0.95 * bp.length);
    expect(bp.length).toBeGreaterThan(200);
    expect(overs).toBeGreaterThan(100);
  });

  it('leaves other actions and jumps it was not told to walk to their one-shot answers', async () => {
    const stepTasks = makeTasks(traces, ['step_into', 'inv_step_into'], { seed: 5, perProgram: 1, maxPrefixFrames: 12 }).tasks;
    const oneShot = stepTasks.map((_, i) => `one-shot ${i}`);
    let calls = 0;
    const decode = async (prompts: string[]) => ((calls += prompts.length), oracleSteps(prompts));
    expect(await walkJumps(stepTasks.map((t) => t.prefix), oneShot, decode, ROOMY, options())).toEqual(oneShot);
    const bp = tasks.filter((t) => t.action.kind === 'breakpoint');
    const bpOneShot = bp.map(() => 'kept');
    expect(await walkJumps(bp.map((t) => t.prefix), bpOneShot, decode, ROOMY, options({ actions: ['step_over'] }))).toEqual(bpOneShot);
    expect(calls).toBe(0);
  });

  it('keeps the one-shot answer when a step does not parse or the walk runs out of steps', async () => {
    const far = tasks.filter((t) => t.action.kind === 'breakpoint' && 'frame' in t.truth).slice(0, 4);
    expect(far.length).toBeGreaterThan(0);
    const oneShot = far.map((_, i) => `one-shot ${i}`);
    const garbage = async (prompts: string[]) => prompts.map(() => '<|frame_sep|><|line_sep|>oops');
    expect(await walkJumps(far.map((t) => t.prefix), oneShot, garbage, ROOMY, options())).toEqual(oneShot);
    // With no steps allowed nothing is decoded and every one-shot answer stands.
    expect(await walkJumps(far.map((t) => t.prefix), oneShot, garbage, ROOMY, options({ maxSteps: 0 }))).toEqual(oneShot);
  });

  it('says which walks answered: an answer where the walk arrived, undefined where it was not walked or could not answer', async () => {
    const bp = tasks.filter((t) => t.action.kind === 'breakpoint' && 'frame' in t.truth);
    const steps = tasks.filter((t) => t.action.kind === 'step_into' || t.action.kind === 'inv_step_into');
    expect(bp.length).toBeGreaterThan(2);
    const prefixes = [...steps, ...bp].map((t) => t.prefix);
    const walked = await walkedAnswers(prefixes, oracleSteps, ROOMY, options({ actions: ['breakpoint'] }));
    expect(walked.slice(0, steps.length).every((a) => a === undefined)).toBe(true);
    bp.forEach((t, i) => expect({ id: t.id, right: full(t, walked[steps.length + i] as string) }).toEqual({ id: t.id, right: true }));
    // The same prompts with every step unparseable: no walk answers, and walkJumps keeps each one-shot answer.
    const garbage = async (prompts: string[]) => prompts.map(() => '<|frame_sep|><|line_sep|>oops');
    expect(await walkedAnswers(prefixes, garbage, ROOMY, options({ actions: ['breakpoint'] }))).toEqual(prefixes.map(() => undefined));
  });

  it('gives up on a model that goes round the same state, after a few steps instead of all of them', async () => {
    const task = tasks.find((t) => t.action.kind === 'breakpoint' && 'frame' in t.truth) as NextStateTask;
    const stepPrompt = task.prefix.slice(0, task.prefix.lastIndexOf('<|breakpoint|>')) + '<|step_into|>';
    const first = await oracle.completeFrame(stepPrompt);
    // The first true step, repeated for ever: unless it is the target, the walk cannot arrive.
    const frame = readPrediction(stepPrompt, first).frame;
    if (frame?.src === task.action.target) return;
    let steps = 0;
    const stuck = async (prompts: string[]) => prompts.map(() => ((steps += 1), first));
    const [answer] = await walkJumps([task.prefix], ['one-shot'], stuck, ROOMY, options());
    expect(answer).toBe('one-shot');
    expect(steps).toBeLessThan(DEFAULT_WALK_STEPS);
    expect(steps).toBeGreaterThanOrEqual(2);
  });

  it('goes on from a new document holding the program and its latest stop when the walk outgrows the context', async () => {
    const long = tasks.filter((t) => t.action.kind === 'breakpoint' && 'frame' in t.truth);
    // The true steps of each walk, in order, recorded with room to spare.
    const recorded = new Map<string, string[]>();
    for (const t of long) {
      const seen: string[] = [];
      await walkJumps([t.prefix], [''], async (ps) => { const a = await oracleSteps(ps); seen.push(a[0]); return a; }, ROOMY, options());
      recorded.set(t.id, seen);
    }
    const task = long.reduce((a, b) => ((recorded.get(b.id)?.length ?? 0) > (recorded.get(a.id)?.length ?? 0) ? b : a));
    const steps = recorded.get(task.id) as string[];
    expect(steps.length).toBeGreaterThanOrEqual(3);
    // A context that holds the prompt and two more frames, not the whole walk.
    const budget = { seqLen: task.prefix.length + steps[0].length + steps[1].length + 80, countTokens: (text: string) => text.length };
    const prompts: string[] = [];
    let k = 0;
    const replay = async (ps: string[]) => ps.map((p) => (prompts.push(p), steps[k++]));
    const [answer] = await walkJumps([task.prefix], ['one-shot'], replay, budget, options({ answerRoom: 16 }));
    expect(full(task, answer)).toBe(true);
    // Some step was asked from the new document: main's call, a jump to the stop, the stop with full locals.
    const anchored = MAIN_CALL_FRAME + '<|breakpoint|>';
    expect(task.prefix.includes(anchored)).toBe(false);
    const at = prompts.findIndex((p) => p.includes(anchored));
    expect(at).toBeGreaterThan(0);
    expect(prompts[at].length).toBeLessThan(prompts[at - 1].length);
    expect(prompts.every((p) => budget.countTokens(p) + 16 <= budget.seqLen + 1)).toBe(true);
  });
});

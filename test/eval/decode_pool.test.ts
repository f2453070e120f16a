import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DecodePool } from '../../src/eval/decode_pool';
import { loadModelCompleter } from '../../src/eval/load';
import { ALL_ACTIONS, makeTasks } from '../../src/eval/tasks';
import { writeModelCheckpoint } from '../../src/model/checkpoint';
import { resolveModelConfig } from '../../src/model/config';
import { LlamaModel } from '../../src/model/model';
import { Tokenizer } from '../../src/tokenizer';
import { initBackend } from '../../src/backend/backend';
import { fixtureTraces } from './helpers';

const ROOT = path.join(__dirname, '..', '..');
const TOKENIZER = path.join(ROOT, 'tokenizer', 'ndbg-2k.model');

describe('decoding in worker processes', () => {
  let dir: string;
  beforeAll(async () => {
    await initBackend('wasm', () => undefined);
    const tok = await Tokenizer.load(TOKENIZER);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-pool-'));
    const config = resolveModelConfig({ vocab_size: tok.vocabSize, d_model: 32, n_layers: 2, n_heads: 2, n_kv_heads: 1, d_ff: 64, max_seq_len: 512 });
    const model = LlamaModel.create(config, 7);
    writeModelCheckpoint(path.join(dir, 'ckpt'), config, model.getWeights(), { tokenizerFile: TOKENIZER });
    model.dispose();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('two workers give the answers of one process, byte for byte, for every action (walked breakpoints, SRC free too)', async () => {
    const checkpoint = path.join(dir, 'ckpt');
    const one = await loadModelCompleter({ checkpoint, backend: 'wasm', maxNewTokens: 16, walkSteps: 2 });
    const two = await loadModelCompleter({ checkpoint, backend: 'wasm', maxNewTokens: 16, walkSteps: 2, decodeWorkers: 2 });
    const { tasks } = makeTasks(fixtureTraces(), ALL_ACTIONS, { seed: 3, perProgram: 2, budget: one.budget });
    // The shortest prompts, enough for the pool to take them (2 workers × 16), with breakpoints among them.
    const shortest = (ps: string[], n: number) => ps.sort((a, b) => a.length - b.length).slice(0, n);
    const prefixes = [
      ...shortest(tasks.filter((t) => t.action.kind !== 'breakpoint').map((t) => t.prefix), 24),
      ...shortest(tasks.filter((t) => t.action.kind === 'breakpoint').map((t) => t.prefix), 8),
    ];
    expect(prefixes.some((p) => p.includes('<|breakpoint|>'))).toBe(true);
    try {
      expect(await two.completeFrames(prefixes)).toEqual(await one.completeFrames(prefixes));
      expect(await two.withSrcConstraint(false).completeFrames(prefixes)).toEqual(await one.withSrcConstraint(false).completeFrames(prefixes));
      // Few prompts stay in this process.
      const pool = (two as unknown as { pool: DecodePool }).pool;
      expect(pool.decoded).toBe(2 * prefixes.length);
      await two.completeFrames(prefixes.slice(0, 5));
      expect(pool.decoded).toBe(2 * prefixes.length);
    } finally {
      two.close();
      one.model.dispose();
      two.model.dispose();
    }
  });

  test('a process that used its workers exits by itself when done, and its workers with it', () => {
    // The build's modules, as the CLI runs them; the workers are the build's decode_worker.js.
    const script = `
      const { loadModelCompleter } = require(${JSON.stringify(path.join(ROOT, 'dist', 'eval', 'load.js'))});
      const { makeTasks, ALL_ACTIONS } = require(${JSON.stringify(path.join(ROOT, 'dist', 'eval', 'tasks.js'))});
      (async () => {
        const c = await loadModelCompleter({ checkpoint: process.argv[1], backend: 'wasm', maxNewTokens: 4, decodeWorkers: 2 });
        const prompt = '<|begin_of_text|><|trace_context_start|>def f(x):\\n    return x\\n<|frame_sep|><|call_sep|><|src_sep|>def f(x):<|arg_sep|>{"x": "1"}<|action_sep|><|step_into|>';
        const texts = await c.completeFrames(Array(32).fill(prompt));
        console.log(JSON.stringify({ answers: texts.length, pids: c.pool.workerPids() }));
      })();`;
    const out = execFileSync(process.execPath, ['-e', script, path.join(dir, 'ckpt')], { timeout: 60000, stdio: ['ignore', 'pipe', 'ignore'] }).toString();
    const { answers, pids } = JSON.parse(out.trim().split('\n').pop()!);
    expect(answers).toBe(32);
    expect(pids).toHaveLength(2);
    // The workers leave with their parent (they may take a moment to see it gone).
    const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
    const deadline = Date.now() + 10000;
    while (pids.some(alive) && Date.now() < deadline) execFileSync('sleep', ['0.2']);
    expect(pids.filter(alive)).toEqual([]);
  });

  test('a worker that cannot load its model fails the request with its reason, not a hang', async () => {
    const pool = new DecodePool({ checkpoint: path.join(dir, 'missing'), backend: 'wasm' }, 2);
    try {
      await expect(pool.completeFrames(Array(40).fill('x'), {}, { maxNewTokens: 4 })).rejects.toThrow(/decode worker \d could not load the model: --checkpoint .*missing: no model.safetensors/);
    } finally {
      pool.close();
    }
  });
});

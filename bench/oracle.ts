/**
 * The oracle and its pdb harness, side by side on the debugger test fixtures: how many action
 * scripts per second the TypeScript oracle answers vs real pdb (one harness process, a forked
 * child per script), plus the in-process tracer on the same programs for scale.
 */
import * as fs from 'fs';
import { buildForwardTree, nextNode } from '../src/debugger';
import { commandsFor, DEFAULT_SCRIPT_OPTIONS, randomScript } from '../src/debugger/differential';
import { runPdbHarness } from '../src/debugger/pdb';
import { traceInProcess } from '../src/trace/inprocess';
import type { ProgramRecord } from '../src/trace/types';
import { assetPath } from '../src/util/paths';
import { Rng } from '../src/util/rng';

export async function run(args: string[]): Promise<Record<string, unknown>> {
  const scriptsPerProgram = Number(args.find((a) => a.startsWith('--scripts='))?.split('=')[1] ?? 10);
  const programs = fs
    .readFileSync(assetPath('test/fixtures/debugger/programs.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ProgramRecord);

  let t = process.hrtime.bigint();
  const traces = traceInProcess(programs);
  const traceSeconds = Number(process.hrtime.bigint() - t) / 1e9;

  const prepared = traces.map((trace) => {
    const tree = buildForwardTree(trace);
    const scripts = Array.from({ length: scriptsPerProgram }, (_, s) => randomScript(tree, Rng.from(0, trace.id, s), DEFAULT_SCRIPT_OPTIONS));
    return { trace, tree, scripts };
  });
  const nScripts = prepared.reduce((s, p) => s + p.scripts.length, 0);

  // Oracle: replay every script 20 times (fresh trees each round, so the lazy index is built too).
  const rounds = 20;
  let steps = 0;
  t = process.hrtime.bigint();
  for (let r = 0; r < rounds; r++) {
    for (const p of prepared) {
      const tree = buildForwardTree(p.trace);
      for (const script of p.scripts) {
        let i = 0;
        for (const a of script) {
          i = nextNode(tree, i, a);
          steps++;
        }
      }
    }
  }
  const oracleSeconds = Number(process.hrtime.bigint() - t) / 1e9 / rounds;

  t = process.hrtime.bigint();
  await runPdbHarness(
    prepared.map(({ trace, tree, scripts }) => ({
      id: trace.id,
      code: trace.code,
      entry_call: trace.entry_call,
      limit: trace.status === 'never' ? trace.events.length : null,
      count: false,
      timeout: 60,
      scripts: scripts.map((s) => commandsFor(tree, s)),
    })),
    { workers: 1 },
  );
  const pdbSeconds = Number(process.hrtime.bigint() - t) / 1e9;

  return {
    programs: programs.length,
    scripts: nScripts,
    actionsPerRound: steps / rounds,
    traceSeconds,
    oracleScriptsPerSecond: nScripts / oracleSeconds,
    pdbScriptsPerSecond: nScripts / pdbSeconds,
    pdbMsPerScript: (pdbSeconds * 1000) / nScripts,
    pdbOverOracleTime: pdbSeconds / oracleSeconds,
  };
}

import { ProgramsConfigSchema } from '../src/programs/config';
import { generateProgram } from '../src/programs/generator';
import { codeFacts } from '../src/programs/normalize';
import { generateCorpus } from '../src/programs/pipeline';
import { rawTracer, sandboxTracer } from '../src/trace/tracers';
import type { ClosableTracer } from '../src/programs/types';
import { loadConfig } from '../src/util/config';
import { assetPath } from '../src/util/paths';
import { flagValue, intFlag } from './flags';

/**
 * `npm run bench -- programs [--n=200] [--workers=2] [--config=configs/programs-quickstart.json]`:
 * throughput of the program stage, side by side in one run: generation alone, AST normalization,
 * and the whole generate pipeline (length bounds, parse, two traced runs per record) with the raw
 * tracer and with the sandbox. The default config is the quickstart's, whose length bound
 * rejects about two thirds of the candidates before any parse or run.
 */
export async function run(args: string[]): Promise<Record<string, unknown>> {
  const n = intFlag(args, 'n', 200);
  const workers = intFlag(args, 'workers', 2);
  const configFile = flagValue(args, 'config') ?? assetPath('configs/programs-quickstart.json');
  const config = loadConfig(ProgramsConfigSchema, { file: configFile });

  let t = Date.now();
  const progs = Array.from({ length: n }, (_, i) => generateProgram(1, i, config.generator));
  const genS = (Date.now() - t) / 1000;
  t = Date.now();
  await codeFacts(progs.map((p) => p.code));
  const factsS = (Date.now() - t) / 1000;

  const pipeline = async (tracer: ClosableTracer) => {
    const start = Date.now();
    const s = await generateCorpus({ n, seed: 1, config, tracer: tracer.trace, write: () => undefined });
    await tracer.close();
    const secs = (Date.now() - start) / 1000;
    return { tracer: tracer.describe, seconds: secs, programsPerS: n / secs, candidatesPerS: s.candidates / secs, recordsPerS: s.recordsAccepted / secs, passRate: s.passRate, accepted: s.accepted };
  };
  const raw = await pipeline(rawTracer());
  const sandbox = await pipeline(sandboxTracer(workers, { maxEvents: config.filter.maxEvents + 16 }));
  return {
    n,
    workers,
    config: configFile,
    generateOnly: { seconds: genS, programsPerS: n / genS },
    normalize: { seconds: factsS, programsPerS: n / factsS },
    raw,
    sandbox,
    sandboxOverRawTime: sandbox.seconds / raw.seconds,
    projected10kMinutesSandbox: (10000 / sandbox.programsPerS) / 60,
  };
}

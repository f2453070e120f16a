/**
 * The `launch` request's arguments: checked field by field (a bad configuration is one error
 * naming the field), then turned into what a session needs: the program, its real run where one
 * is needed (oracle mode, verify, inverse) and the completer (a checkpoint's model or the oracle).
 */
import * as fs from 'fs';
import * as path from 'path';
import { z } from 'zod';
import { BACKENDS, type BackendChoice } from '../backend/backend';
import { DEFAULT_WALK_STEPS } from '../eval/jump_walk';
import { loadCompleter } from '../eval/load';
import type { TextCompleter } from '../eval/completer';
import type { PredictOptions } from '../eval/types';
import { traceProgram } from '../trace';
import { checkPythonSyntax } from '../trace/syntax';
import type { TraceRecord } from '../trace/types';
import { UserError } from '../util/errors';

const LaunchSchema = z
  .object({
    program: z.string().min(1),
    call: z.string().min(1),
    checkpoint: z.string().min(1).optional(),
    direction: z.enum(['forward', 'inverse']).default('forward'),
    verify: z.boolean().default(false),
    stopOnEntry: z.boolean().default(true),
    temperature: z.number().min(0).default(0),
    topP: z.number().gt(0).max(1).default(0.95),
    seed: z.number().int().default(0),
    maxNewTokens: z.number().int().positive().default(128),
    beams: z.number().int().positive().optional(),
    srcConstraint: z.boolean().default(true),
    frameGrammar: z.boolean().default(true),
    walkSteps: z.number().int().min(0).default(DEFAULT_WALK_STEPS),
    backend: z.enum(BACKENDS as unknown as [string, ...string[]]).default('auto'),
  })
  .passthrough();

export type LaunchConfig = z.infer<typeof LaunchSchema>;

/** The configuration, or a UserError naming the first bad field (`launch: "call": ...`). */
export function parseLaunchArgs(args: unknown): LaunchConfig {
  const r = LaunchSchema.safeParse(args ?? {});
  if (!r.success) {
    const issue = r.error.issues[0];
    const field = issue.path.join('.') || '(arguments)';
    const got = issue.code === 'invalid_type' && issue.received === 'undefined' ? 'is required' : issue.message.toLowerCase();
    throw new UserError(`launch: "${field}" ${got}`);
  }
  const c = r.data;
  if (!/^[A-Za-z_]\w*\s*\(.*\)$/s.test(c.call.trim())) throw new UserError(`launch: "call" must be a call like f(3), got ${JSON.stringify(c.call)}`);
  if (c.beams !== undefined && c.beams > 1 && c.temperature > 0) throw new UserError('launch: "beams" searches for the likeliest frame; it does not go with "temperature" > 0');
  if (c.checkpoint === undefined && (c.temperature > 0 || (c.beams ?? 1) > 1)) throw new UserError('launch: "temperature"/"beams" need a "checkpoint" (without one the adapter runs the oracle, which has nothing to sample)');
  return c;
}

export interface LoadedProgram {
  config: LaunchConfig;
  /** Absolute path of the program file. */
  file: string;
  code: string;
  call: string;
  trace?: TraceRecord;
  completer: TextCompleter;
  oracle: boolean;
  sampling?: PredictOptions;
  label: string;
}

/** Reads, checks and (where needed) traces the program, and loads the completer. */
export async function loadProgram(config: LaunchConfig, cwd = process.cwd()): Promise<LoadedProgram> {
  const file = path.resolve(cwd, config.program);
  if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw new UserError(`launch: "program" ${config.program}: no such file`);
  if (config.checkpoint !== undefined && !fs.existsSync(path.resolve(cwd, config.checkpoint))) {
    throw new UserError(`launch: "checkpoint" ${config.checkpoint}: no such directory`);
  }
  const code = fs.readFileSync(file, 'utf8');
  const call = config.call.trim();
  try {
    checkPythonSyntax(file, code, call);
  } catch (e) {
    if (e instanceof UserError) throw new UserError(`launch: ${e.message.replace(/^--call /, '"call" ')}`);
    throw e;
  }
  const oracle = config.checkpoint === undefined;
  let trace: TraceRecord | undefined;
  if (oracle || config.verify || config.direction === 'inverse') {
    trace = await traceProgram({ id: file, code, call });
    if (trace.events.length === 0) throw new UserError(`launch: "program" ${config.program} could not be traced${trace.error ? `: ${trace.error}` : ''}`);
  }
  const completer = await loadCompleter(
    { oracle, checkpoint: config.checkpoint && path.resolve(cwd, config.checkpoint), backend: config.backend as BackendChoice, maxNewTokens: config.maxNewTokens, constrainSrc: config.srcConstraint, constrainFrame: config.frameGrammar, walkSteps: config.walkSteps, beams: config.beams },
    trace ? [trace] : [],
  );
  const sampling = config.temperature > 0 ? { temperature: config.temperature, topP: config.topP, seed: config.seed } : undefined;
  return { config, file, code, call, trace, completer, oracle, sampling, label: oracle ? 'oracle' : (config.checkpoint as string) };
}

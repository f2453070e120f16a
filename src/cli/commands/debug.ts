import * as fs from 'fs';
import * as readline from 'readline';
import type { CommandModule } from 'yargs';
import { BACKENDS, BackendChoice } from '../../backend/backend';
import { loadCompleter } from '../../eval/load';
import { DEFAULT_WALK_STEPS } from '../../eval/jump_walk';
import { DEFAULT_BEAMS } from '../../eval/model_completer';
import { DebugSession } from '../../eval/session';
import type { PredictOptions } from '../../eval/types';
import { assertCheckpointDir } from '../../model/checkpoint';
import { traceProgram } from '../../trace';
import { checkPythonSyntax } from '../../trace/syntax';
import type { TraceRecord } from '../../trace/types';
import { UserError } from '../../util/errors';

interface DebugArgs {
  file: string;
  call: string;
  checkpoint?: string;
  oracle: boolean;
  verify: boolean;
  inverse: boolean;
  script?: string;
  'script-file'?: string;
  backend: string;
  temperature: number;
  'top-p': number;
  seed: number;
  'max-new-tokens': number;
  'src-constraint': boolean;
  'frame-grammar': boolean;
  'walk-steps': number;
  beams?: number;
}

/** Commands of a --script ("s;n;b 4") or --script-file (one per line, `#` comments). */
export function scriptCommands(script: string | undefined, file: string | undefined): string[] | undefined {
  if (script !== undefined && file !== undefined) throw new UserError('give --script or --script-file, not both');
  if (file !== undefined) {
    if (!fs.existsSync(file)) throw new UserError(`--script-file ${file}: no such file`);
    return fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
  }
  if (script === undefined) return undefined;
  return script
    .split(/[;\n]/)
    .map((c) => c.trim())
    .filter((c) => c !== '');
}

/** Runs the commands one by one, echoing each after the prompt so the output reads like a pdb session. */
async function runScript(session: DebugSession, commands: string[], write: (s: string) => void): Promise<void> {
  write(session.start().join('\n') + '\n');
  for (const command of commands) {
    write(`(ndbg) ${command}\n`);
    const r = await session.execute(command);
    if (r.output.length > 0) write(r.output.join('\n') + '\n');
    if (r.quit) return;
  }
}

async function runInteractive(session: DebugSession): Promise<void> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, prompt: '(ndbg) ' });
  process.stdout.write(session.start().join('\n') + '\n');
  rl.prompt();
  try {
    for await (const line of rl) {
      const r = await session.execute(line);
      if (r.output.length > 0) process.stdout.write(r.output.join('\n') + '\n');
      if (r.quit) break;
      rl.prompt();
    }
  } finally {
    rl.close();
  }
}

/** `ndbg debug`: step through a program with a neural debugger, pdb style (docs/eval.md). */
export const debugCommand: CommandModule<object, DebugArgs> = {
  command: 'debug <file>',
  describe: "Step through a Python program with a neural debugger (pdb-like REPL); --verify shows the real state beside the model's",
  builder: (y) =>
    y
      .positional('file', { type: 'string', demandOption: true, describe: 'Python file defining the entry function (CruxEval style)' })
      .option('call', { type: 'string', demandOption: true, describe: "the entry call, e.g. 'f(3)' (main runs `return CALL`)" })
      .option('checkpoint', { type: 'string', describe: 'checkpoint directory of a trained model' })
      .option('oracle', { type: 'boolean', default: false, describe: 'use the true next states instead of a model (a perfect model: learn NDL, test scripts)' })
      .option('verify', { type: 'boolean', default: false, describe: 'trace the program and show the real state beside each prediction ([=] or [≠ ...])' })
      .option('inverse', { type: 'boolean', default: false, describe: "step backwards from the entry function's return (rs, rn, rc)" })
      .option('script', { type: 'string', describe: 'run these commands non-interactively, separated by ";" (e.g. "s;n;b 4;p;q")' })
      .option('script-file', { type: 'string', describe: 'run the commands in this file (one per line, # comments)' })
      .option('backend', { type: 'string', choices: BACKENDS as unknown as string[], default: 'auto', describe: 'tfjs backend for --checkpoint' })
      .option('temperature', { type: 'number', default: 0, describe: 'sampling temperature; 0 decodes greedily' })
      .option('top-p', { type: 'number', default: 0.95, describe: 'nucleus mass when --temperature > 0' })
      .option('seed', { type: 'number', default: 0, describe: 'sampling seed (offset by the step number)' })
      .option('max-new-tokens', { type: 'number', default: 128, describe: 'longest predicted frame, in tokens' })
      .option('src-constraint', { type: 'boolean', default: true, describe: 'SRC may only be a line of the program (constrained decoding); --no-src-constraint decodes freely' })
      .option('frame-grammar', { type: 'boolean', default: true, describe: 'Each answer may only be text that parses as one frame (grammar-constrained decoding); --no-frame-grammar decodes freely' })
      .option('walk-steps', { type: 'number', default: DEFAULT_WALK_STEPS, describe: 'b LINE is answered by walking the model\'s own single steps to the breakpoint, up to N steps (docs/eval.md, "walked breakpoints"); 0 answers it in one shot' })
      .option('beams', { type: 'number', describe: `beam search: the likeliest frame over N beams (default ${DEFAULT_BEAMS}; 1 decodes greedily); not with --temperature` })
      .conflicts('script', 'script-file')
      .example("$0 debug prog.py --call 'f(3)' --checkpoint runs/tiny/checkpoints/step-001000 --verify", 'interactive, model vs real')
      .example("$0 debug prog.py --call 'f(3)' --oracle --script 's;s;n;p;r;c'", 'a scripted session with the perfect model')
      .example("$0 debug prog.py --call 'f(3)' --checkpoint C --inverse --verify --script 'rc'", 'predict the arguments back from the return value'),
  handler: async (args) => {
    if (!args.oracle && !args.checkpoint) throw new UserError('give --checkpoint DIR (a trained model) or --oracle (the true next states)');
    if (args.oracle && args.checkpoint) throw new UserError('give --checkpoint or --oracle, not both');
    if (args.checkpoint) assertCheckpointDir(args.checkpoint);
    if (!fs.existsSync(args.file)) throw new UserError(`${args.file}: no such file`);
    if (!(args.temperature >= 0)) throw new UserError(`--temperature must be ≥ 0, got ${args.temperature}`);
    if (!(args['top-p'] > 0 && args['top-p'] <= 1)) throw new UserError(`--top-p must be in (0, 1], got ${args['top-p']}`);
    for (const k of ['max-new-tokens', 'beams'] as const) {
      if (args[k] !== undefined && !(Number.isInteger(args[k]) && (args[k] as number) > 0)) throw new UserError(`--${k} must be a positive integer, got ${args[k]}`);
    }
    if (!(Number.isInteger(args['walk-steps']) && args['walk-steps'] >= 0)) throw new UserError(`--walk-steps must be a non-negative integer, got ${args['walk-steps']}`);
    if (args.beams !== undefined && args.beams > 1 && args.temperature > 0) throw new UserError('--beams searches for the likeliest frame; it does not go with sampling (--temperature > 0)');
    const commands = scriptCommands(args.script, args['script-file']);
    const code = fs.readFileSync(args.file, 'utf8');
    const call = args.call.trim();
    if (!/^[A-Za-z_]\w*\s*\(.*\)$/s.test(call)) throw new UserError(`--call "${call}" is not a call like f(3)`);
    checkPythonSyntax(args.file, code, call);
    // The real run is needed by the oracle, by --verify, and by inverse sessions (they start at the real return).
    let trace: TraceRecord | undefined;
    if (args.oracle || args.verify || args.inverse) {
      trace = await traceProgram({ id: args.file, code, call });
      if (trace.events.length === 0) throw new UserError(`${args.file}: the program did not run${trace.error ? `: ${trace.error}` : ''}`);
    }
    const completer = await loadCompleter(
      { oracle: args.oracle, checkpoint: args.checkpoint, backend: args.backend as BackendChoice, maxNewTokens: args['max-new-tokens'], constrainSrc: args['src-constraint'], constrainFrame: args['frame-grammar'], walkSteps: args['walk-steps'], beams: args.beams },
      trace ? [trace] : [],
    );
    const sampling: PredictOptions | undefined = args.temperature > 0 ? { temperature: args.temperature, topP: args['top-p'], seed: args.seed } : undefined;
    const session = new DebugSession({
      code,
      call,
      completer,
      trace,
      direction: args.inverse ? 'inverse' : 'forward',
      verify: args.verify,
      sampling,
      label: args.oracle ? 'oracle' : args.checkpoint,
    });
    if (commands) await runScript(session, commands, (s) => process.stdout.write(s));
    else await runInteractive(session);
  },
};

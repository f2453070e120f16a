import type { CommandModule } from 'yargs';
import { BACKENDS, BackendChoice, initBackend } from '../../backend/backend';
import { assertCheckpointDir, checkpointTokenizerPath, loadModelFromCheckpoint } from '../../model/checkpoint';
import * as fs from 'fs';
import { generate } from '../../model/generate';
import { Tokenizer } from '../../tokenizer';
import { UserError } from '../../util/errors';

interface GenerateArgs {
  checkpoint: string;
  prompt?: string;
  'prompt-ids'?: string;
  'max-new-tokens': number;
  greedy: boolean;
  temperature: number;
  'top-p': number;
  seed: number;
  stop?: string[];
  'no-eos-stop': boolean;
  tokenizer?: string;
  backend: string;
  json: boolean;
}

/** `ndbg generate`: sample a continuation from a checkpoint with a KV cache (docs/model.md). */
export const generateCommand: CommandModule<object, GenerateArgs> = {
  command: 'generate',
  describe: 'Generate a continuation of a prompt from a checkpoint (greedy or temperature/top-p sampling)',
  builder: (y) =>
    y
      .option('checkpoint', { type: 'string', demandOption: true, describe: 'checkpoint directory' })
      .option('prompt', { type: 'string', describe: 'prompt text (encoded with the checkpoint\'s tokenizer)' })
      .option('prompt-ids', { type: 'string', describe: 'prompt as comma-separated token ids (no tokenizer needed)' })
      .option('max-new-tokens', { type: 'number', default: 64, describe: 'tokens to generate at most' })
      .option('greedy', { type: 'boolean', default: false, describe: 'argmax decoding' })
      .option('temperature', { type: 'number', default: 1, describe: 'sampling temperature (> 0)' })
      .option('top-p', { type: 'number', default: 1, describe: 'nucleus sampling mass in (0, 1]' })
      .option('seed', { type: 'number', default: 0, describe: 'sampling seed' })
      .option('stop', { type: 'string', array: true, describe: 'extra stop tokens: ids, or texts that encode to one token' })
      .option('no-eos-stop', { type: 'boolean', default: false, describe: 'do not stop at the tokenizer\'s end-of-document token' })
      .option('tokenizer', { type: 'string', describe: 'sentencepiece .model (default: the one the checkpoint records)' })
      .option('backend', { type: 'string', choices: BACKENDS as unknown as string[], default: 'auto', describe: 'tfjs backend' })
      .option('json', { type: 'boolean', default: false, describe: 'print {prompt_ids, generated_ids, text, stop} as JSON' })
      .example('$0 generate --checkpoint runs/tiny/checkpoints/step-00000100 --prompt "x = 1" --max-new-tokens 32 --greedy', ''),
  handler: async (args) => {
    assertCheckpointDir(args.checkpoint);
    if (args.tokenizer !== undefined && !fs.existsSync(args.tokenizer)) throw new UserError(`--tokenizer ${args.tokenizer}: no such file`);
    if ((args.prompt === undefined) === (args['prompt-ids'] === undefined)) throw new UserError('give exactly one of --prompt and --prompt-ids');
    if (!(args['max-new-tokens'] >= 0)) throw new UserError(`--max-new-tokens must be ≥ 0, got ${args['max-new-tokens']}`);
    if (!args.greedy && !(args.temperature > 0)) throw new UserError(`--temperature must be > 0, got ${args.temperature}`);
    if (!(args['top-p'] > 0 && args['top-p'] <= 1)) throw new UserError(`--top-p must be in (0, 1], got ${args['top-p']}`);
    const tokFile = args.tokenizer ?? checkpointTokenizerPath(args.checkpoint);
    const tok = tokFile ? await Tokenizer.load(tokFile) : undefined;
    if (!tok && args.prompt !== undefined) throw new UserError(`no tokenizer found for ${args.checkpoint}; pass --tokenizer FILE or use --prompt-ids`);
    const log = args.json ? () => undefined : undefined;
    await initBackend(args.backend as BackendChoice, log);
    const { model, config } = loadModelFromCheckpoint(args.checkpoint);
    if (tok && tok.vocabSize !== config.vocab_size) throw new UserError(`tokenizer ${tokFile} has ${tok.vocabSize} pieces, the model ${config.vocab_size}`);
    const promptIds =
      args.prompt !== undefined
        ? (tok as Tokenizer).encode(args.prompt)
        : (args['prompt-ids'] as string).split(',').map((s) => {
            const n = Number(s.trim());
            if (!Number.isInteger(n) || n < 0 || n >= config.vocab_size) throw new UserError(`--prompt-ids: "${s}" is not a token id in [0, ${config.vocab_size})`);
            return n;
          });
    const stopTokens: number[] = [];
    if (tok && !args['no-eos-stop'] && tok.eosId >= 0) stopTokens.push(tok.eosId);
    for (const s of args.stop ?? []) {
      if (/^\d+$/.test(s)) stopTokens.push(Number(s));
      else {
        const ids = tok?.encode(s) ?? [];
        if (ids.length !== 1) throw new UserError(`--stop "${s}" does not encode to exactly one token`);
        stopTokens.push(ids[0]);
      }
    }
    const r = generate(model, promptIds, {
      maxNewTokens: args['max-new-tokens'],
      greedy: args.greedy,
      temperature: args.temperature,
      topP: args['top-p'],
      seed: args.seed,
      stopTokens,
    });
    model.dispose();
    const text = tok ? tok.decode(r.ids) : undefined;
    if (args.json) {
      process.stdout.write(JSON.stringify({ prompt_ids: promptIds, generated_ids: r.ids, text: text ?? null, stop: r.stop }) + '\n');
    } else {
      process.stdout.write((text ?? r.ids.join(' ')) + '\n');
      process.stderr.write(`generated ${r.ids.length} tokens (stop: ${r.stop})\n`);
    }
  },
};

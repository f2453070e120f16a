import * as fs from 'fs';
import * as path from 'path';
import type { CommandModule } from 'yargs';
import { writeModelCheckpoint } from '../../model/checkpoint';
import { readHfModel } from '../../model/hf';
import { LlamaModel } from '../../model/model';
import { UserError } from '../../util/errors';

interface ImportArgs {
  dir: string;
  out: string;
}

/** `ndbg import-hf`: a Hugging Face Llama directory → a checkpoint (docs/model.md). */
export const importHfCommand: CommandModule<object, ImportArgs> = {
  command: 'import-hf <dir>',
  describe: 'Import a Hugging Face Llama model directory as an ndbg checkpoint',
  builder: (y) =>
    y
      .positional('dir', { type: 'string', demandOption: true, describe: 'directory with config.json and model.safetensors (or a sharded index)' })
      .option('out', { type: 'string', demandOption: true, describe: 'checkpoint directory to create (must not exist)' })
      .example('$0 import-hf hf/tiny --out ckpt/tiny', 'back from the HF layout'),
  handler: (args) => {
    if (fs.existsSync(args.out)) throw new UserError(`${args.out} already exists; choose a new --out`);
    const { config, weights } = readHfModel(args.dir);
    LlamaModel.checkWeights(config, weights, path.join(args.dir, 'model.safetensors'));
    const tok = path.join(args.dir, 'tokenizer.model');
    writeModelCheckpoint(args.out, config, weights, { tokenizerFile: fs.existsSync(tok) ? tok : undefined, extraConfig: { imported_from: path.resolve(args.dir) } });
    process.stdout.write(`imported ${args.dir} → ${args.out}\n`);
  },
};

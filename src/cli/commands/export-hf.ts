import * as fs from 'fs';
import * as path from 'path';
import type { CommandModule } from 'yargs';
import { assertCheckpointDir, checkpointTokenizerPath, readCheckpointConfig, readCheckpointWeights } from '../../model/checkpoint';
import { DEFAULT_MAX_SHARD_SIZE, parseShardSize, writeHfModel, HfSpecialIds } from '../../model/hf';
import { hfTokenizerFiles } from '../../model/hf_tokenizer';
import { LlamaModel } from '../../model/model';
import { Tokenizer } from '../../tokenizer';
import { UserError } from '../../util/errors';
import { writeDirAtomic } from '../../util/fsync';

interface ExportArgs {
  checkpoint: string;
  out: string;
  tokenizer?: string;
  'max-shard-size'?: string;
}

/** `ndbg export-hf`: a checkpoint → a Hugging Face Llama directory (docs/model.md). */
export const exportHfCommand: CommandModule<object, ExportArgs> = {
  command: 'export-hf',
  describe: 'Export a checkpoint as a Hugging Face Llama model (config.json, model.safetensors or shards + index, tokenizer.json and its configs)',
  builder: (y) =>
    y
      .option('checkpoint', { type: 'string', demandOption: true, describe: 'checkpoint directory (model.safetensors + config.json)' })
      .option('out', { type: 'string', demandOption: true, describe: 'output directory (must not exist)' })
      .option('tokenizer', { type: 'string', describe: 'sentencepiece .model to ship (default: the one the checkpoint records)' })
      .option('max-shard-size', {
        type: 'string',
        describe: `largest weights file, decimal units as transformers (5GB = 5e9 bytes); bigger models get model-0000i-of-0000n.safetensors + model.safetensors.index.json (default ${DEFAULT_MAX_SHARD_SIZE})`,
      })
      .example('$0 export-hf --checkpoint runs/tiny/checkpoints/step-00000100 --out hf/tiny', 'then AutoModelForCausalLM / AutoTokenizer .from_pretrained("hf/tiny")'),
  handler: async (args) => {
    assertCheckpointDir(args.checkpoint);
    const maxShardBytes = parseShardSize(args['max-shard-size'] ?? DEFAULT_MAX_SHARD_SIZE);
    if (fs.existsSync(args.out)) throw new UserError(`${args.out} already exists; choose a new --out`);
    if (args.tokenizer !== undefined && !fs.existsSync(args.tokenizer)) throw new UserError(`--tokenizer ${args.tokenizer}: no such file`);
    const { config } = readCheckpointConfig(args.checkpoint);
    const weights = readCheckpointWeights(args.checkpoint);
    // Validates names and shapes against the config before anything is written.
    LlamaModel.checkWeights(config, weights, path.join(args.checkpoint, 'model.safetensors'));
    const tokFile = args.tokenizer ?? checkpointTokenizerPath(args.checkpoint);
    const ids: HfSpecialIds = {};
    let tokenizerFiles: ReturnType<typeof hfTokenizerFiles> | undefined;
    if (tokFile) {
      const tok = await Tokenizer.load(tokFile);
      if (tok.vocabSize !== config.vocab_size) throw new UserError(`tokenizer ${tokFile} has ${tok.vocabSize} pieces but the model's vocab_size is ${config.vocab_size}`);
      ids.bos_token_id = tok.bosId;
      ids.eos_token_id = tok.eosId;
      ids.pad_token_id = tok.padId;
      tokenizerFiles = hfTokenizerFiles(tok.modelPath, config.max_seq_len);
    } else {
      process.stderr.write('export-hf: no tokenizer recorded in the checkpoint; exporting weights only (pass --tokenizer)\n');
    }
    writeDirAtomic(args.out, (tmp) => {
      writeHfModel(tmp, config, weights, ids, { maxShardBytes });
      fs.writeFileSync(path.join(tmp, 'generation_config.json'), JSON.stringify({ ...ids, do_sample: false }, null, 2) + '\n');
      if (tokFile && tokenizerFiles) {
        // The sentencepiece model too: `ndbg import-hf` takes it back into the checkpoint.
        fs.copyFileSync(tokFile, path.join(tmp, 'tokenizer.model'));
        for (const [name, json] of Object.entries(tokenizerFiles)) fs.writeFileSync(path.join(tmp, name), JSON.stringify(json, null, 2) + '\n');
      }
    });
    process.stdout.write(`exported ${args.checkpoint} → ${args.out}${tokFile ? ` (tokenizer ${tokFile})` : ''}\n`);
  },
};

import * as path from 'path';
import type { Argv, CommandModule } from 'yargs';
import { Tokenizer, defaultTokenizerPath } from '../../tokenizer';
import { checkDocuments } from '../../tokenizer/check';
import { tokenizerTrainConfigSchema } from '../../tokenizer/config';
import { trainTokenizer } from '../../tokenizer/train';
import { loadConfig } from '../../util/config';
import { withConfigOptions } from '../options';

/** `ndbg tokenizer train|encode|check`: train the sentencepiece model; inspect how text tokenizes. */
export const tokenizerCommand: CommandModule = {
  command: 'tokenizer',
  describe: 'Train the sentencepiece tokenizer with the NDL special tokens, or inspect one',
  builder: (y: Argv) =>
    y
      .command({
        command: 'train',
        describe:
          'Sample text from the configured sources (NDL documents, Python code, JSONL text), run spm_train ' +
          'with every NDL token as a user-defined symbol, compare the alternative settings on held-out text, ' +
          'and write OUTDIR/NAME.model, .vocab and .manifest.json',
        builder: (yy: Argv) =>
          withConfigOptions(yy).example('$0 tokenizer train --config configs/tokenizer.json', 'retrain the shipped tokenizer'),
        handler: async (argv) => {
          const file = argv.config as string | undefined;
          const cfg = loadConfig(tokenizerTrainConfigSchema, { file, overrides: argv.set as string[] });
          const result = await trainTokenizer(cfg);
          process.stdout.write(`${result.manifestPath}\n`);
        },
      })
      .command({
        command: 'encode [text]',
        describe: 'Print the ids and pieces of a text (or of stdin) and check the round trip',
        builder: (yy: Argv) =>
          yy
            .positional('text', { type: 'string', describe: 'text to encode; omitted: read stdin' })
            .option('model', { type: 'string', describe: 'tokenizer .model file', default: defaultTokenizerPath() }),
        handler: async (argv) => {
          const tok = await Tokenizer.load(path.resolve(argv.model as string));
          const text = argv.text !== undefined ? String(argv.text) : await readStdin();
          const ids = tok.encode(text);
          const pieces = tok.pieces(text);
          const bytes = Buffer.byteLength(text, 'utf8');
          process.stdout.write(
            JSON.stringify({
              ids,
              pieces,
              tokens: ids.length,
              bytes,
              bytesPerToken: ids.length ? +(bytes / ids.length).toFixed(3) : 0,
              roundTrip: tok.decode(ids) === text,
            }) + '\n',
          );
        },
      })
      .command({
        command: 'check <files..>',
        describe:
          'Encode every document of JSONL files (e.g. `ndbg ndl` output) and count exact round trips, ' +
          'bytes per token, and documents whose NDL tokens did not come out as single ids',
        builder: (yy: Argv) =>
          yy
            .positional('files', { type: 'string', array: true, describe: 'JSONL files with a text field' })
            .option('field', { type: 'string', default: 'text', describe: 'JSON field holding the document' })
            .option('model', { type: 'string', describe: 'tokenizer .model file', default: defaultTokenizerPath() })
            .option('workers', { type: 'number', default: 2, describe: 'encode worker threads' }),
        handler: async (argv) => {
          const tok = await Tokenizer.load(path.resolve(argv.model as string));
          try {
            for (const file of argv.files as string[]) {
              const report = await checkDocuments(tok, path.resolve(file), argv.field as string, argv.workers as number);
              process.stdout.write(JSON.stringify({ file, ...report }) + '\n');
            }
          } finally {
            await tok.close();
          }
        },
      })
      .demandCommand(1, 'Pick an action: train, encode or check'),
  handler: () => undefined,
};

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

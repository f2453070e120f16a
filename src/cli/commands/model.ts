import type { CommandModule } from 'yargs';
import { withConfigOptions } from '../options';
import { headDim, loadModelConfig, modelStats } from '../../model/config';
import { UserError } from '../../util/errors';

interface ModelInfoArgs {
  config?: string;
  set: string[];
  'seq-len'?: number;
  json: boolean;
}

function fmt(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(3)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

const info: CommandModule<object, ModelInfoArgs> = {
  command: 'info',
  describe: 'Parameter count and FLOPs per token of a config (training: 6·N_matmul + 12·L·d·T)',
  builder: (y) =>
    withConfigOptions(y)
      .option('seq-len', { type: 'number', describe: 'sequence length T for the attention FLOPs (default: model.max_seq_len)' })
      .option('json', { type: 'boolean', default: false, describe: 'print JSON' })
      .example('$0 model info --config configs/tiny.json', 'sizes of the tiny model'),
  handler: (args) => {
    if (!args.config) throw new UserError('model info needs --config FILE');
    const c = loadModelConfig(args.config, args.set ?? []);
    const s = modelStats(c, args['seq-len'] ?? c.max_seq_len);
    if (args.json) {
      process.stdout.write(JSON.stringify({ config: c, ...s }, null, 2) + '\n');
      return;
    }
    const lines = [
      `config            ${args.config}`,
      `dims              V=${c.vocab_size} d=${c.d_model} L=${c.n_layers} heads=${c.n_heads} kv_heads=${c.n_kv_heads} head_dim=${headDim(c)} d_ff=${c.d_ff} T=${c.max_seq_len}${c.tie_embeddings ? ' tied' : ' untied'}`,
      `parameters        ${fmt(s.params)} (${s.params})`,
      `non-embedding     ${fmt(s.nonEmbeddingParams)}`,
      `matmul params N   ${fmt(s.matmulParams)}`,
      `fwd FLOPs/token   ${fmt(s.forwardFlopsPerToken)}  (2N + 4·L·d·T, T=${s.seqLen})`,
      `train FLOPs/token ${fmt(s.trainFlopsPerToken)}  (6N + 12·L·d·T)`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  },
};

/** `ndbg model ...`: inspect model configs (docs/model.md). */
export const modelCommand: CommandModule = {
  command: 'model <command>',
  describe: 'Inspect model configs (parameters, FLOPs per token)',
  builder: (y) => y.command(info).demandCommand(1, 'Pick a subcommand: info'),
  handler: () => undefined,
};

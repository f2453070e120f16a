import * as fs from 'fs';
import type { Argv, CommandModule } from 'yargs';
import { rowLenOf } from '../../data/batch';
import { samplerConfigSchema } from '../../ndl/config';
import { checkRoundTrips, generateDocuments } from '../../ndl/run';
import { entrySamplingSchema } from '../../ndl/repo_scope';
import { scopeRepoTraces } from '../../ndl/repo_run';
import { renderDocument } from '../../ndl/show';
import type { TokenCounter } from '../../ndl/sampler';
import { Tokenizer } from '../../tokenizer';
import { loadConfig } from '../../util/config';
import { UserError } from '../../util/errors';
import { invalidLine, readJsonl } from '../../util/jsonl';
import { withConfigOptions } from '../options';

/**
 * `ndbg ndl`: trace JSONL → NDL document JSONL (sampled trajectories or the canonical all-step
 * pair); `ndbg ndl show` prints one document for a person; `ndbg ndl check` verifies the
 * sampler/formatter/parser round trip over a trace file.
 */
export const ndlCommand: CommandModule = {
  command: 'ndl',
  describe: 'Write NDL documents (debugger trajectories) from traces; show or check them',
  builder: (y: Argv) =>
    y
      .command({
        command: '$0',
        describe: 'Sample K trajectories per program (or the all-step pair) and write {id, doc, direction, actions, nodes, end, text} JSONL',
        builder: (yy: Argv) =>
          withConfigOptions(samplingOptions(yy))
            .option('out', { type: 'string', demandOption: true, describe: 'output JSONL of documents' })
            .option('policy', {
              choices: ['sampled', 'all-step'] as const,
              default: 'sampled' as const,
              describe: 'sampled: the seeded policy (spec §5); all-step: per program the forward document under all step_into and the inverse one under all inv_step_into',
            })
            .option('overwrite', { type: 'boolean', default: false, describe: 'replace --out if it exists' })
            .option('seq-len', { type: 'number', describe: "fit every document in one training row: token budget seq_len + 1 (the model's max_seq_len), counted with --tokenizer" })
            .option('tokenizer', { type: 'string', describe: 'tokenizer model that counts the --seq-len budget exactly (default: the approximate counter)' })
            .example('$0 ndl --traces traces.jsonl --out docs.jsonl --seed 1 --per-program 4', 'four sampled documents per program')
            .example('$0 ndl --traces traces.jsonl --out canon.jsonl --policy all-step', 'the canonical documents')
            .example('$0 ndl --traces t.jsonl --out d.jsonl --set maxTokens=2048 --set forwardShare=3', 'token budget, 3:1 forward:inverse'),
        handler: async (argv) => {
          const config = samplerConfig(argv);
          const budget = await documentBudget(argv['seq-len'] as number | undefined, argv.tokenizer as string | undefined);
          if (budget.maxTokens !== undefined) config.maxTokens = budget.maxTokens;
          const summary = await generateDocuments({
            traces: argv.traces as string,
            out: argv.out as string,
            seed: argv.seed as number,
            perProgram: argv['per-program'] as number,
            policy: argv.policy as 'sampled' | 'all-step',
            config,
            countTokens: budget.countTokens,
            overwrite: argv.overwrite as boolean,
            quiet: argv.quiet as boolean,
          });
          process.stdout.write(JSON.stringify(summary) + '\n');
        },
      })
      .command({
        command: 'scope',
        describe: 'Repository traces (`ndbg trace-repo`) -> trace JSONL scoped to sampled entry invocations (docs/ndl.md, "Repository documents")',
        builder: (yy: Argv) =>
          withConfigOptions(yy)
            .option('traces', { type: 'string', demandOption: true, describe: 'repository trace JSONL' })
            .option('out', { type: 'string', demandOption: true, describe: 'output trace JSONL (level "repository")' })
            .option('seed', { type: 'number', default: 0, describe: 'entry sampling seed; the choice depends only on (seed, trace id)' })
            .option('seq-len', { type: 'number', describe: 'the SRC budget is half of seq_len + 1 tokens unless --set contextTokens=N' })
            .option('tokenizer', { type: 'string', describe: 'tokenizer model that counts the SRC budget exactly' })
            .option('holdout-out', { type: 'string', describe: 'write the scoped traces of held-out repositories here (for `ndbg eval next-state --repo-traces`)' })
            .option('holdout', { type: 'number', default: 0.2, describe: 'with --holdout-out: fraction of repositories held out (seeded by --holdout-seed and the repository id)' })
            .option('holdout-seed', { type: 'number', default: 0 })
            .option('holdout-repos', { type: 'string', describe: 'with --holdout-out: comma-separated repository ids to hold out instead of a fraction' })
            .example('$0 ndl scope --traces shop.jsonl --out scoped.jsonl --set perTrace=8 --set recursion=false', ''),
        handler: async (argv) => {
          const sampling = loadConfig(entrySamplingSchema, { file: argv.config as string | undefined, overrides: argv.set as string[] });
          const budget = await documentBudget(argv['seq-len'] as number | undefined, argv.tokenizer as string | undefined);
          const explicit = (argv.set as string[]).some((s) => s.startsWith('contextTokens='));
          if (budget.maxTokens !== undefined && !explicit) sampling.contextTokens = Math.max(1, Math.floor(budget.maxTokens / 2));
          const fraction = argv.holdout as number;
          if (!(fraction >= 0 && fraction < 1)) throw new UserError(`--holdout must be in [0, 1), got ${fraction}`);
          const holdout = argv['holdout-out']
            ? { out: argv['holdout-out'] as string, fraction, seed: argv['holdout-seed'] as number, repos: argv['holdout-repos'] ? String(argv['holdout-repos']).split(',').map((r) => r.trim()) : undefined }
            : undefined;
          const summary = await scopeRepoTraces({ traces: argv.traces as string, out: argv.out as string, seed: argv.seed as number, sampling, countTokens: budget.countTokens, holdout });
          process.stdout.write(JSON.stringify(summary) + '\n');
        },
      })
      .command({
        command: 'show',
        describe: 'Pretty-print one document (one frame per line) from a documents JSONL file or stdin',
        builder: (yy: Argv) =>
          yy
            .option('docs', { type: 'string', describe: 'documents JSONL (default: stdin)' })
            .option('id', { type: 'string', describe: 'program id (default: the first document)' })
            .option('doc', { type: 'number', describe: 'document number within the program (default: its first)' })
            .example('$0 ndl show --docs docs.jsonl --id sample_3 --doc 1', 'the second document of sample_3'),
        handler: async (argv) => {
          const rec = await findDocument(argv.docs as string | undefined, argv.id as string | undefined, argv.doc as number | undefined);
          const header = `${rec.id} doc ${rec.doc ?? 0} (${rec.direction ?? '?'}, ${rec.end ?? '?'})`;
          process.stdout.write(renderDocument(header, rec.text));
        },
      })
      .command({
        command: 'check',
        describe: 'Sample documents for every trace, then check that each follows the oracle and parses back to every state and action',
        builder: (yy: Argv) => withConfigOptions(samplingOptions(yy)),
        handler: async (argv) => {
          const summary = await checkRoundTrips({
            traces: argv.traces as string,
            seed: argv.seed as number,
            perProgram: argv['per-program'] as number,
            config: samplerConfig(argv),
            quiet: argv.quiet as boolean,
          });
          process.stdout.write(JSON.stringify(summary, null, 1) + '\n');
          if (summary.failures.length > 0) throw new UserError(`${summary.failures.length} documents failed the round trip`, 1);
        },
      }),
  handler: () => undefined,
};

function samplingOptions(y: Argv) {
  return y
    .option('traces', { type: 'string', demandOption: true, describe: 'trace JSONL (from `ndbg trace`)' })
    .option('seed', { type: 'number', default: 0, describe: 'sampling seed; documents depend only on (seed, program id)' })
    .option('per-program', { type: 'number', default: 1, describe: 'documents per program (split forward:inverse by the config shares, default 1:1)' })
    .option('quiet', { type: 'boolean', default: false, describe: 'no progress bar' });
}

/** The sampler config from --config/--set, after checking the numeric flags. */
function samplerConfig(argv: Record<string, unknown>) {
  const k = argv['per-program'];
  if (typeof k !== 'number' || !Number.isInteger(k) || k < 1) throw new UserError(`--per-program must be a positive integer, got ${String(k)}`);
  if (typeof argv.seed !== 'number' || !Number.isInteger(argv.seed)) throw new UserError(`--seed must be an integer, got ${String(argv.seed)}`);
  return loadConfig(samplerConfigSchema, { file: argv.config as string | undefined, overrides: argv.set as string[] });
}

/** The --seq-len token budget and the tokenizer that counts it (both optional). */
async function documentBudget(seqLen: number | undefined, tokenizer: string | undefined): Promise<{ maxTokens?: number; countTokens?: TokenCounter }> {
  if (seqLen !== undefined && (!Number.isInteger(seqLen) || seqLen < 1)) throw new UserError(`--seq-len must be a positive integer, got ${seqLen}`);
  // A document fits when it is one training row (data/batch.ts rowLenOf).
  const maxTokens = seqLen === undefined ? undefined : rowLenOf(seqLen);
  if (tokenizer === undefined) return { maxTokens };
  const tok = await Tokenizer.load(tokenizer);
  return { maxTokens, countTokens: (text) => tok.encodeIds(text).length };
}

interface DocLine {
  id: string;
  doc?: number;
  direction?: string;
  end?: string;
  text: string;
}

async function findDocument(file: string | undefined, id: string | undefined, doc: number | undefined): Promise<DocLine> {
  if (file !== undefined && !fs.existsSync(file)) throw new UserError(`--docs ${file}: no such file`);
  const name = file ?? '(stdin)';
  for await (const { lineNumber, value: rec } of readJsonl<DocLine>(file ?? { stream: process.stdin, name })) {
    if (typeof rec?.id !== 'string' || typeof rec.text !== 'string') {
      invalidLine(`${name}:${lineNumber}: not a document record (needs string id and text)`);
      continue;
    }
    if ((id === undefined || rec.id === id) && (doc === undefined || rec.doc === doc)) return rec;
  }
  throw new UserError(`${name}: no document${id !== undefined ? ` with id ${id}` : ''}${doc !== undefined ? ` and doc ${doc}` : ''}`);
}

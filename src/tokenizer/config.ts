/**
 * `ndbg tokenizer train` options (configs/tokenizer.json), validated with zod: a typo is an
 * error, not a silently ignored field.
 */
import { z } from 'zod';

const name = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'use letters, digits, "_", "-" and "." only');
const bytes = z.number().int().positive();

/** The sentencepiece trainer settings ndbg varies; the ones needed for exact round trips are fixed (spm.ts). */
export const spmSettingsSchema = z
  .object({
    /**
     * unigram: bpe gives 4-5% fewer tokens but sentencepiece encodes it 3x slower (below the
     * 2 MB/s target per core); see docs/tokenizer.md.
     */
    modelType: z.enum(['unigram', 'bpe']).default('unigram'),
    /**
     * true: pieces never cross a space boundary (a run of spaces starts a new word). false
     * (measured better on both NDL and code, docs/tokenizer.md): pieces such as `▁=▁` or a
     * newline plus indentation may span spaces.
     */
    splitByWhitespace: z.boolean().default(false),
    /** Runs of spaces (indentation) may be one piece. */
    allowWhitespaceOnlyPieces: z.boolean().default(true),
    /** Every digit is its own piece (numbers in traces are read digit by digit). */
    splitDigits: z.boolean().default(true),
    /**
     * true: a newline is always a piece of its own (a user-defined symbol after the NDL tokens),
     * so a source line has the same ids in the program context (where it ends with a newline)
     * as in a frame's SRC (where it does not): the model copies a line id for id instead of
     * learning that `):⏎` and `):` are the same. Costs one id per line (docs/tokenizer.md).
     */
    newlinePiece: z.boolean().default(false),
    /** Longest piece in characters (spm's --max_sentencepiece_length). */
    maxPieceLength: z.number().int().min(1).max(64).default(16),
    characterCoverage: z.number().gt(0).max(1).default(0.9999),
  })
  .strict();
export type SpmSettings = z.infer<typeof spmSettingsSchema>;

const sourceBase = {
  /** Label in the manifest and the comparison table; defaults to the kind and position. */
  name: name.optional(),
  /** Most UTF-8 bytes this source contributes to the training sample. */
  maxBytes: bytes,
};

export const sourceSchema = z.discriminatedUnion('kind', [
  /** NDL documents as `ndbg ndl` writes them: JSONL with the document in `field`. */
  z.object({ kind: z.literal('ndl'), path: z.string().min(1), field: z.string().default('text'), ...sourceBase }).strict(),
  /** Any JSONL with a text field (web text, docs); evaluated as "text". */
  z.object({ kind: z.literal('jsonl'), path: z.string().min(1), field: z.string().default('text'), ...sourceBase }).strict(),
  /**
   * Python files and directories (searched recursively for *.py). `@stdlib` stands for the
   * standard library of the `python3` on PATH. Paths containing any `exclude` substring are skipped.
   */
  z
    .object({
      kind: z.literal('python'),
      paths: z.array(z.string().min(1)).min(1),
      exclude: z.array(z.string()).default(['site-packages', '__pycache__']),
      ...sourceBase,
    })
    .strict(),
  /**
   * Programs JSONL ({id, code, input, entry?}) traced in-process and written as forward
   * all-step_into NDL documents with src/ndl's formatter: NDL text without running the whole
   * pipeline (used for the first shipped tokenizer; prefer `ndl` once `ndbg ndl` output exists).
   */
  z.object({ kind: z.literal('programs'), path: z.string().min(1), ...sourceBase }).strict(),
]);
export type SourceConfig = z.infer<typeof sourceSchema>;

export const tokenizerTrainConfigSchema = z
  .object({
    /** Output files are OUTDIR/NAME.model, NAME.vocab and NAME.manifest.json. */
    name,
    outDir: z.string().default('tokenizer'),
    seed: z.number().int().min(0).default(0),
    vocabSize: z.number().int().min(512).max(262144).default(8192),
    sources: z.array(sourceSchema).min(1),
    /** Share of each source's items (documents, files) held out from training for evaluation. */
    heldOutFraction: z.number().min(0).max(0.5).default(0.05),
    /** Most UTF-8 bytes of held-out text kept per source (evaluation cost). */
    heldOutMaxBytes: bytes.default(1_000_000),
    /** Training sentences are cut to at most this many characters (spm reads one sentence per line). */
    chunkChars: z.number().int().min(64).max(16384).default(2048),
    threads: z.number().int().min(1).max(64).default(2),
    spm: spmSettingsSchema.default({}),
    /** Other settings trained on the same sample and compared by compression (written under OUTDIR/alternatives/). */
    alternatives: z.array(z.object({ name, spm: spmSettingsSchema.partial() }).strict()).default([]),
  })
  .strict();
export type TokenizerTrainConfig = z.infer<typeof tokenizerTrainConfigSchema>;

/** Evaluation group of a source: compression is reported per group. */
export function sourceRole(kind: SourceConfig['kind']): 'ndl' | 'code' | 'text' {
  if (kind === 'ndl' || kind === 'programs') return 'ndl';
  if (kind === 'python') return 'code';
  return 'text';
}

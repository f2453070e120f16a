/**
 * manifest.json: the self-describing index of a built data set (see docs/data.md). Everything
 * the loader needs is here; shard files carry a copy of the identity fields in their Arrow
 * schema metadata so that a stray shard from another build is recognised.
 */
import * as fs from 'fs';
import * as path from 'path';
import { z } from 'zod';
import { UserError } from '../util/errors';
import { formatZodError } from '../util/config';
import { SOURCE_KINDS } from './sources';

export const MANIFEST_FORMAT = 'ndbg-data-v1';
export const MANIFEST_FILE = 'manifest.json';

export const ShardEntrySchema = z
  .object({
    file: z.string(), // relative to the data set directory
    rows: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative(), // non-padding tokens at positions 1..T of each row (targets)
    bytes: z.number().int().positive(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  })
  .strict();

const SplitSchema = z
  .object({
    documents: z.number().int().nonnegative(),
    textBytes: z.number().int().nonnegative(),
    rows: z.number().int().nonnegative(),
    tokens: z.number().int().nonnegative(),
    shards: z.array(ShardEntrySchema),
  })
  .strict();

const SourceSchema = z
  .object({
    name: z.string(),
    kind: z.enum(SOURCE_KINDS),
    /** As given to `data build`. */
    path: z.string(),
    /** The same, relative to the data set directory (absent in data sets built before it existed). */
    relativePath: z.string().optional(),
    /** Python version(s) of the traces a trace-derived source was made from (its sidecar manifest); null when unknown. */
    python: z.string().nullable(),
    generator: z.unknown(),
    sidecar: z.object({ file: z.string(), content: z.record(z.unknown()) }).strict().nullable(),
    /** How this source's documents were cut into rows (absent in data sets built before it existed). */
    packing: z
      .object({
        mode: z.enum(['whole_documents', 'stream']),
        /** Documents cut across rows: 0 for whole-document packing. */
        documentsSplit: z.number().int().nonnegative(),
        /** Documents longer than a row, left out (whole-document packing only). */
        documentsDropped: z.number().int().nonnegative(),
        tokensDropped: z.number().int().nonnegative(),
        /** Padding tokens / target positions (rows × T). */
        paddingFraction: z.number().min(0).max(1),
      })
      .strict()
      .optional(),
    /** The field or column read as the document, when not `text` (`NAME=PATH:kind:COLUMN`). */
    column: z.string().optional(),
    /** A directory code source: the .py files kept and what was skipped, by reason (src/data/walk.ts). */
    walk: z.object({ files: z.number().int().nonnegative(), skipped: z.record(z.number().int().nonnegative()) }).strict().optional(),
    /** Documents removed as duplicates of one kept earlier (code and text sources, unless deduplication is off). */
    dedup: z
      .object({ exact: z.number().int().nonnegative(), near: z.number().int().nonnegative(), acrossSources: z.number().int().nonnegative() })
      .strict()
      .optional(),
    /** Documents removed because they contain an eval program (only when built against an eval set). */
    decontamination: z
      .object({ documents: z.number().int().nonnegative(), evalPrograms: z.number().int().nonnegative(), evalIds: z.array(z.string()) })
      .strict()
      .optional(),
    train: SplitSchema,
    val: SplitSchema,
  })
  .strict();

export const ManifestSchema = z
  .object({
    format: z.literal(MANIFEST_FORMAT),
    tokenizer: z
      .object({
        path: z.string(),
        /** `path` relative to the data set directory (absent for "byte" and in older data sets). */
        relativePath: z.string().optional(),
        sha256: z.string(),
        vocabSize: z.number().int().positive(),
        bosId: z.number().int(),
        eosId: z.number().int(),
        padId: z.number().int(),
      })
      .strict(),
    seqLen: z.number().int().positive(),
    rowLen: z.number().int().positive(),
    tokenDtype: z.enum(['uint16', 'uint32']),
    packing: z
      .object({
        /** Consecutive rows of a stream-packed source share one token; whole-document rows share none. */
        rowOverlap: z.literal(1),
        maskContext: z.boolean(),
        valFraction: z.number().min(0).max(1),
        splitSeed: z.number().int(),
        shardBytesMax: z.number().int().positive(),
        /** Piece dropout on the training documents (absent: none; src/tokenizer/piece_dropout.ts). */
        pieceDropout: z.number().gt(0).max(1).optional(),
      })
      .strict(),
    /** What the build removed documents by (absent in data sets built before it existed). */
    filters: z
      .object({
        /** Near-duplicate settings (src/data/dedup.ts), null when deduplication was off. */
        dedup: z
          .object({ shingle: z.number().int().positive(), hashes: z.number().int().positive(), bands: z.number().int().positive(), threshold: z.number().min(0).max(1), seed: z.number().int() })
          .strict()
          .nullable(),
        /** Eval sets every source was decontaminated against, as given. */
        against: z.array(z.string()),
        /** Directory code sources: the size above which a .py file is skipped. */
        maxFileBytes: z.number().int().positive(),
      })
      .strict()
      .optional(),
    sources: z.array(SourceSchema).min(1),
  })
  .strict();

export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestSource = Manifest['sources'][number];
export type ShardEntry = z.infer<typeof ShardEntrySchema>;
/** A data set's row split (by document, data/build.ts isValidationDocument): not a program split (programs/splits.ts ProgramSplit). */
export type DataSplit = 'train' | 'val';

export function readManifest(dir: string): Manifest {
  const file = path.join(dir, MANIFEST_FILE);
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') throw new UserError(`${file} not found: is ${dir} a data set built by \`ndbg data build\`?`);
    throw new UserError(`${file}: not valid JSON (${err.message})`);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) throw new UserError(formatZodError(file, parsed.error).replace('invalid config', 'invalid manifest'));
  const m = parsed.data;
  if (m.rowLen !== m.seqLen + 1) throw new UserError(`${file}: rowLen ${m.rowLen} must be seqLen + 1 = ${m.seqLen + 1}`);
  return m;
}

export function writeManifest(dir: string, m: Manifest): void {
  const file = path.join(dir, MANIFEST_FILE);
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(m, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

export function tokenDtypeFor(vocabSize: number): 'uint16' | 'uint32' {
  return vocabSize <= 65536 ? 'uint16' : 'uint32';
}

import { z } from 'zod';

/**
 * Knobs of the program generator and of the filters (`ndbg programs generate --config FILE`,
 * `--set generator.nesting=3`). Every field has a default, so `{}` is a valid config.
 */
const range = (min: number, max: number) =>
  z
    .object({ min: z.number().int().min(0).default(min), max: z.number().int().min(0).default(max) })
    .strict()
    .refine((r) => r.min <= r.max, { message: 'min must be <= max' })
    .default({ min, max });

const prob = (p: number) => z.number().min(0).max(1).default(p);

export const StatementMixSchema = z
  .object({
    assign: z.number().min(0).default(5),
    update: z.number().min(0).default(3),
    list_mutation: z.number().min(0).default(2),
    dict_mutation: z.number().min(0).default(1.5),
    if: z.number().min(0).default(2.5),
    for: z.number().min(0).default(2.5),
    while: z.number().min(0).default(1),
    early_return: z.number().min(0).default(1),
    try: z.number().min(0).default(1),
    break_continue: z.number().min(0).default(0.8),
  })
  .strict()
  .default({});
export type StatementMix = z.infer<typeof StatementMixSchema>;

export const GeneratorConfigSchema = z
  .object({
    /** Inputs (hence program records) per program. */
    inputs: range(1, 3),
    /** Top-level statements per function body before the return ("length"). */
    statements: range(2, 4),
    /** Statements per nested block. */
    blockStatements: range(1, 2),
    /** Deepest block nesting (1 = no statement inside a loop/if body may open another block). */
    nesting: z.number().int().min(1).max(4).default(2),
    /** Expression nesting depth. */
    exprDepth: z.number().int().min(1).max(4).default(2),
    /**
     * Weights of the planned call depth 1..4 (1 = f alone, 2 = f calls a helper, ...): the
     * helper chain f -> h1 -> h2 -> h3 is built to this depth and every call in it is made
     * unconditionally, so the trace reaches it.
     */
    callDepthWeights: z.array(z.number().min(0)).length(4).default([0.2, 0.3, 0.3, 0.2]),
    /** Probability that a program has a bounded recursive helper. */
    recursion: prob(0.2),
    /** Probability that a program defines a class (with __init__ and methods) and uses it. */
    classes: prob(0.2),
    /** Probability that a helper raises on some inputs. */
    raisingHelper: prob(0.25),
    /** Share of those raises that the caller does not catch (the run then ends with status error). */
    uncaughtShare: prob(0.5),
    /** Parameters of the entry function. */
    params: range(1, 3),
    /**
     * The entry function's name: `varied` draws one per program (a verb, verb_noun, or `f` for
     * 15%) from its own random stream; `f` names every entry `f`, as CruxEval does.
     */
    entryNames: z.enum(['varied', 'f']).default('varied'),
    /**
     * Share of programs whose string literals — in the code and in the entry call's inputs — are
     * written with double quotes, as black formats Python (a literal that holds a double quote
     * keeps its single quotes). 0 writes every literal the way repr() does; about a fifth of
     * CruxEval's programs use double quotes (docs/programs.md).
     */
    doubleQuotes: prob(0),
    /**
     * Share of variable names (parameters, locals, loop targets) drawn outside the per-type
     * lists: a single letter or a made-up identifier, as in real code (`def count(s, t)`), so a
     * model must copy names from the program instead of recalling about 130. Drawn from its
     * own stream: 0 keeps programs as they were, and any share changes the names (and, in a few
     * percent of programs, a choice that tests a name) only (docs/programs.md).
     */
    wideNames: prob(0),
    /**
     * The share of wide names among the entry function's parameters (default: `wideNames`).
     * Their values stand in the entry call, so a model can read each one's type from the
     * literal; with listed names it learns to read the type from the name instead (`t` got
     * `0` for `"r"`; docs/programs.md). Locals keep `wideNames`: no literal shows their type.
     */
    wideParams: z.number().min(0).max(1).optional(),
    /**
     * Share of the entry call's string inputs (strings and list-of-string items) drawn as
     * made-up English-like words (`'gliend'`, `'Draybtess'`) instead of the short word list
     * and random letters, so that string values spell themselves with the tokenizer's whole
     * range of pieces and a model must copy them. Drawn from its own stream: 0 keeps programs
     * as they were, and any share changes the inputs only (docs/programs.md).
     */
    wideStrings: prob(0),
    /**
     * Share of `for` statements that loop over a string's characters (`for c in s:`), most
     * folding the character into a counter, a rebuilt string, a list or a dict of counts. The
     * other loops iterate lists and ranges, and strings in only about one loop in sixteen,
     * where real code iterates strings often (docs/programs.md). 0 keeps programs as they were.
     */
    stringLoops: prob(0),
    mix: StatementMixSchema,
  })
  .strict()
  .default({});
export type GeneratorConfig = z.infer<typeof GeneratorConfigSchema>;

export const FilterConfigSchema = z
  .object({
    /** Step budget: a run with more trace events than this is rejected (status never counts too). */
    maxEvents: z.number().int().min(1).default(2000),
    minChars: z.number().int().min(0).default(20),
    maxChars: z.number().int().min(1).default(4000),
    maxLines: z.number().int().min(1).default(150),
    /** Modules a program may import. */
    allowImports: z
      .array(z.string())
      .default(['math', 'string', 're', 'collections', 'itertools', 'functools', 'operator', 'heapq', 'bisect', 'copy']),
    /** Trace every record twice and reject it when the traces differ. */
    checkDeterminism: z.boolean().default(true),
    /**
     * Generated programs only: reject a run that ends in an exception the generator did not
     * plan (a TypeError, an IndexError...), i.e. a generator type error, not a deliberate raise.
     */
    rejectUnplannedErrors: z.boolean().default(true),
  })
  .strict()
  .default({});
export type FilterConfig = z.infer<typeof FilterConfigSchema>;

export const ProgramsConfigSchema = z
  .object({ generator: GeneratorConfigSchema, filter: FilterConfigSchema })
  .strict();
export type ProgramsConfig = z.infer<typeof ProgramsConfigSchema>;

export function defaultProgramsConfig(): ProgramsConfig {
  return ProgramsConfigSchema.parse({});
}

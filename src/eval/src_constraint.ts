/**
 * Constrained decoding of SRC: pdb's SRC is always a line of the program, so while the model
 * writes a SRC field (after `<|src_sep|>`) the text it has written must stay a prefix of one of
 * the lines of the prompt's program context, and it may close the field only where such a line
 * ends. The model still chooses which line and how to spell it in tokens; what it can no longer
 * do is write a line that the program does not have. Everything outside SRC fields (events,
 * locals, values, exits) is left to the frame grammar (frame_grammar.ts), which applies this
 * constraint inside SRC. docs/eval.md says why and shows the numbers with and without it.
 *
 * The check is on UTF-8 bytes, not on one canonical token spelling of each line: sentencepiece
 * spells a few lines differently inside a document than alone (`)))` before a separator can be
 * `)` `))` or `))` `)`), and byte-fallback pieces carry single bytes of a character.
 */
import { parseDocument } from '../ndl/parse';
import { STRUCTURE_TOKENS } from '../ndl/tokens';
import type { ParsedDocument } from '../ndl/types';
import type { TextTokenizer } from '../tokenizer/types';
import { specialId, tokenBytes, type TokenBytes } from './token_bytes';

/** What every prompt's constraint shares for one tokenizer: token bytes and the separators. */
interface Vocabulary extends TokenBytes {
  srcSep: number;
  /** `<|arg_sep|>` closes SRC in call, return, exception and inverse frames; `<|action_sep|>` in line frames. */
  closers: number[];
}

const vocabularies = new WeakMap<TextTokenizer, Vocabulary>();

function vocabularyOf(tok: TextTokenizer): Vocabulary {
  const cached = vocabularies.get(tok);
  if (cached) return cached;
  const id = (t: string) => specialId(tok, t, 'SRC constraint');
  const v: Vocabulary = { ...tokenBytes(tok), srcSep: id(STRUCTURE_TOKENS.srcSep), closers: [id(STRUCTURE_TOKENS.argSep), id(STRUCTURE_TOKENS.actionSep)] };
  vocabularies.set(tok, v);
  return v;
}

/** The program text of an NDL prompt, as the parser reads it; undefined if the prompt does not get as far as one. */
export function promptContext(prefix: string): string | undefined {
  const doc = parseDocument(prefix);
  return doc.error && !doc.context ? undefined : doc.context;
}

export class SrcConstraint {
  private readonly vocab: Vocabulary;
  private readonly lines: Buffer[];

  /** `lines`: the texts a SRC field may hold (blank lines are left out: no frame stops on one). */
  constructor(tok: TextTokenizer, lines: Iterable<string>) {
    this.vocab = vocabularyOf(tok);
    this.lines = [...new Set(lines)].filter((l) => l.trim()).map((l) => Buffer.from(l, 'utf8'));
  }

  /**
   * The constraint for a prompt, from the lines of its program context; undefined when the
   * prompt has no context. After a breakpoint action the one line allowed is its target: the
   * run stops only on a line event at that line, or not at all (an exit, which has no SRC).
   */
  static forPrompt(tok: TextTokenizer, prefix: string): SrcConstraint | undefined {
    return SrcConstraint.forDocument(tok, parseDocument(prefix));
  }

  /** forPrompt for a prompt already parsed. */
  static forDocument(tok: TextTokenizer, doc: ParsedDocument): SrcConstraint | undefined {
    if (doc.error && !doc.context) return undefined;
    const action = doc.frames[doc.frames.length - 1]?.action;
    const target = action?.kind === 'breakpoint' ? action.target : undefined;
    return new SrcConstraint(tok, target !== undefined ? [target] : doc.context.split('\n'));
  }

  /**
   * The ids the next token may be after `generated` (the continuation so far): inside an open
   * SRC field, the tokens that keep it a prefix of a program line, plus the closers where it
   * is a whole line; undefined outside a field, and where no line can be continued (free
   * decoding rather than a forced wrong token). `closer`, when given, is the one closer the
   * frame's event allows (frame_grammar.ts); otherwise either may close the field.
   */
  allowed(generated: readonly number[], closer?: number): ReadonlySet<number> | undefined {
    const { bytes, byFirstByte, srcSep } = this.vocab;
    const closers = closer === undefined ? this.vocab.closers : [closer];
    const open = generated.lastIndexOf(srcSep);
    if (open < 0) return undefined;
    const parts: Buffer[] = [];
    for (let i = open + 1; i < generated.length; i++) {
      const b = bytes[generated[i]];
      // A closer (or any special token) has ended the field.
      if (!b) return undefined;
      parts.push(b);
    }
    const written = Buffer.concat(parts);
    const ids = new Set<number>();
    for (const line of this.lines) {
      if (line.length < written.length || !line.subarray(0, written.length).equals(written)) continue;
      if (line.length === written.length) {
        for (const c of closers) ids.add(c);
        continue;
      }
      const rest = line.subarray(written.length);
      for (const id of byFirstByte.get(rest[0]) ?? []) {
        const b = bytes[id]!;
        if (b.length <= rest.length && rest.subarray(0, b.length).equals(b)) ids.add(id);
      }
    }
    return ids.size ? ids : undefined;
  }
}

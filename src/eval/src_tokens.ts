/**
 * SRC token accuracy, teacher-forced: on held-out NDL documents, how often the model's top-1
 * next token is right inside the SRC spans of the frames, given the true document so far.
 * Exact-match SRC (next-state eval) needs every token of a line right, so it stays near zero
 * until per-token copying is nearly perfect (a 12-token line at 75% per token is right 3% of
 * the time); this measure moves long before it and says how far the model is from copying
 * lines: the first token of a span (which line comes next) and the rest (copying the line once
 * it has started) separately, and the share of spans right from end to end.
 */
import * as fs from 'fs';
import type { TextTokenizer } from '../tokenizer/types';
import { STRUCTURE_TOKENS } from '../ndl/tokens';
import { UserError } from '../util/errors';
import { invalidLine, readJsonl } from '../util/jsonl';
import { fitsRow, type PromptBudget } from './budget';
import type { NextTokenLogProbs } from './copy_probe';

/** The `text` of the first `limit` documents of an NDL JSONL file (`ndbg ndl` output). */
export async function readNdlTexts(file: string, limit: number): Promise<string[]> {
  if (!fs.existsSync(file)) throw new UserError(`--ndl ${file}: no such file`);
  const texts: string[] = [];
  for await (const line of readJsonl<Record<string, unknown>>(file)) {
    const text = line.value?.text;
    if (typeof text !== 'string') {
      invalidLine(`${file}:${line.lineNumber}: field "text" must be a string (an NDL document from \`ndbg ndl\`)`);
      continue;
    }
    texts.push(text);
    if (texts.length >= limit) break;
  }
  if (!texts.length) throw new UserError(`--ndl ${file}: no documents`);
  return texts;
}

export interface SrcTokenAccuracy {
  /** Documents scored (whole, within the model's context) and left out as longer. */
  documents: number;
  tooLong: number;
  /** SRC spans scored; a span is the tokens after `<|src_sep|>` up to its closing separator, inclusive. */
  spans: number;
  /** Top-1 accuracy on a span's first token (which line comes next). */
  firstToken: number;
  /** Top-1 accuracy on the span's other tokens, the closing separator included (copying the line). */
  restTokens: number;
  /** Spans with every token right: teacher-forced SRC exact match. */
  spanExact: number;
}

interface SpanIds {
  srcSep: number;
  /** Tokens that close a SRC span: `<|arg_sep|>` (call, return, inverse frames), `<|action_sep|>` (line frames). */
  closers: Set<number>;
  frameSep: number;
}

function spanIds(tok: TextTokenizer): SpanIds {
  const id = (t: string) => {
    const v = tok.idOf?.(t);
    if (v === undefined) throw new Error(`SRC token accuracy: the tokenizer has no id for ${t} (not an NDL tokenizer)`);
    return v;
  };
  return { srcSep: id(STRUCTURE_TOKENS.srcSep), closers: new Set([id(STRUCTURE_TOKENS.argSep), id(STRUCTURE_TOKENS.actionSep)]), frameSep: id(STRUCTURE_TOKENS.frameSep) };
}

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
  return best;
}

/**
 * Scores the SRC spans of the frames (after the context's first `<|frame_sep|>`; the program
 * text itself holds no spans). Documents longer than a training row (budget.ts fitsRow: the
 * context seqLen + 1 tokens) are counted, not cut.
 */
export function srcTokenAccuracy(logProbs: NextTokenLogProbs, tok: TextTokenizer, texts: readonly string[], budget: Pick<PromptBudget, 'seqLen'>): SrcTokenAccuracy {
  const ids = spanIds(tok);
  let documents = 0;
  let tooLong = 0;
  let spans = 0;
  let exact = 0;
  const first = { hit: 0, n: 0 };
  const rest = { hit: 0, n: 0 };
  for (const text of texts) {
    const doc = Int32Array.from(tok.encode(text));
    if (!fitsRow(budget, doc.length)) {
      tooLong++;
      continue;
    }
    documents++;
    const framesFrom = doc.indexOf(ids.frameSep);
    if (framesFrom < 0) continue;
    // The last token is only a target, as in a training row.
    const lp = logProbs(doc.subarray(0, doc.length - 1));
    for (let t = framesFrom; t + 1 < doc.length; t++) {
      if (doc[t] !== ids.srcSep) continue;
      // Position u predicts doc[u + 1]: the span's tokens are doc[t+1 .. closer].
      let allRight = true;
      let u = t;
      for (; u + 1 < doc.length; u++) {
        const right = argmax(lp[u]) === doc[u + 1];
        const bucket = u === t ? first : rest;
        bucket.n++;
        if (right) bucket.hit++;
        else allRight = false;
        if (ids.closers.has(doc[u + 1])) break;
      }
      spans++;
      if (allRight) exact++;
      t = u;
    }
  }
  const rate = (b: { hit: number; n: number }) => (b.n ? b.hit / b.n : 0);
  return { documents, tooLong, spans, firstToken: rate(first), restTokens: rate(rest), spanExact: spans ? exact / spans : 0 };
}

/** One line for logs. */
export function formatSrcTokenAccuracy(r: SrcTokenAccuracy): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  return `SRC tokens, teacher-forced (${r.spans} spans in ${r.documents} NDL documents${r.tooLong ? `, ${r.tooLong} longer than the context left out` : ''}): first token ${pct(r.firstToken)}, rest ${pct(r.restTokens)}, whole span ${pct(r.spanExact)}`;
}

import { SPECIAL_TOKENS } from '../ndl/tokens';
import { invalidLine, readJsonl } from '../util/jsonl';
import { round } from './evaluate';
import type { Tokenizer } from './index';

export interface CheckReport {
  docs: number;
  exactRoundTrips: number;
  /** Documents where the count of special-token ids differs from the count of special tokens in the text. */
  specialTokenMismatches: number;
  bytes: number;
  tokens: number;
  bytesPerToken: number;
  /** Ids of the first few documents that failed a check. */
  failures: string[];
}

const SPECIAL_RE = new RegExp(SPECIAL_TOKENS.map((t) => t.replace(/[|]/g, '\\|')).join('|'), 'g');

/**
 * `ndbg tokenizer check`: encodes every document of a JSONL file (batched on worker threads)
 * and checks decode(encode(x)) === x and that each NDL token in the text became exactly one id.
 */
export async function checkDocuments(tok: Tokenizer, file: string, field: string, workers: number): Promise<CheckReport> {
  const specialIds = new Set(SPECIAL_TOKENS.map((t) => tok.idOf(t)));
  const report: CheckReport = { docs: 0, exactRoundTrips: 0, specialTokenMismatches: 0, bytes: 0, tokens: 0, bytesPerToken: 0, failures: [] };
  let batch: Array<{ id: string; text: string }> = [];
  const flush = async () => {
    const ids = await tok.encodeBatch(batch.map((b) => b.text), { workers });
    batch.forEach((b, i) => {
      const enc = ids[i];
      report.docs++;
      report.bytes += Buffer.byteLength(b.text, 'utf8');
      report.tokens += enc.length;
      const ok = tok.decode(enc) === b.text;
      if (ok) report.exactRoundTrips++;
      let nIds = 0;
      for (const id of enc) if (specialIds.has(id)) nIds++;
      const nText = (b.text.match(SPECIAL_RE) ?? []).length;
      if (nIds !== nText) report.specialTokenMismatches++;
      if ((!ok || nIds !== nText) && report.failures.length < 10) report.failures.push(b.id);
    });
    batch = [];
  };
  for await (const line of readJsonl<Record<string, unknown>>(file)) {
    const text = line.value?.[field];
    if (typeof text !== 'string') {
      invalidLine(`${file}:${line.lineNumber}: field "${field}" is missing or not a string`);
      continue;
    }
    const id = line.value?.id;
    batch.push({ id: `${typeof id === 'string' ? id : 'line'}:${line.lineNumber}`, text });
    if (batch.length >= 512) await flush();
  }
  if (batch.length) await flush();
  report.bytesPerToken = report.tokens ? round(report.bytes / report.tokens, 4) : 0;
  return report;
}

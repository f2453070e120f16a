import * as fs from 'fs';
import * as readline from 'readline';

export interface JsonlLine<T> {
  lineNumber: number;
  value?: T;
  /** Set when the line is not valid JSON; the caller decides whether to skip or abort. */
  error?: string;
}

/** Streams a JSONL file line by line; blank lines are skipped, bad lines are reported, not thrown. */
export async function* readJsonl<T = unknown>(file: string): AsyncGenerator<JsonlLine<T>> {
  const rl = readline.createInterface({ input: fs.createReadStream(file, 'utf8'), crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const line of rl) {
    lineNumber++;
    if (line.trim() === '') continue;
    try {
      yield { lineNumber, value: JSON.parse(line) as T };
    } catch (e) {
      yield { lineNumber, error: `${file}:${lineNumber}: invalid JSON (${(e as Error).message})` };
    }
  }
}

/** Reads a whole JSONL file; throws on the first malformed line (for small, trusted files). */
export function readJsonlSync<T = unknown>(file: string): T[] {
  const out: T[] = [];
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as T);
    } catch (e) {
      throw new Error(`${file}:${i + 1}: invalid JSON (${(e as Error).message})`);
    }
  });
  return out;
}

/**
 * Appends records to a JSONL file, one write per record so that a crash loses at most the
 * record being written (never earlier ones).
 */
export class JsonlWriter {
  private fd: number;
  constructor(readonly file: string, append = true) {
    this.fd = fs.openSync(file, append ? 'a' : 'w');
  }
  write(record: unknown): void {
    fs.writeSync(this.fd, JSON.stringify(record) + '\n');
  }
  close(): void {
    fs.fsyncSync(this.fd);
    fs.closeSync(this.fd);
  }
}

import * as fs from 'fs';
import * as path from 'path';
import * as readline from 'readline';
import { UserError } from './errors';

export interface JsonlLine<T> {
  lineNumber: number;
  value?: T;
  /** Set when the line is not valid JSON (only with `invalid: 'yield'`). */
  error?: string;
}

/**
 * What a command does with a malformed input line (bad JSON, or a record missing a field): by
 * default it is an error naming file:line; with the CLI's `--skip-invalid` the line is skipped,
 * counted and reported at the end. One policy per process, set once by the CLI.
 */
const policy = { skip: false };
const skipped = { count: 0, examples: [] as string[] };

export function setSkipInvalid(skip: boolean): void {
  policy.skip = skip;
}

/** Reports a malformed line: throws a UserError with `message` (which names file:line) unless skipping. */
export function invalidLine(message: string): void {
  if (!policy.skip) throw new UserError(`${message} (pass --skip-invalid to skip such lines)`);
  skipped.count++;
  if (skipped.examples.length < 5) skipped.examples.push(message);
}

/** The lines skipped so far under --skip-invalid. */
export function skippedLines(): { count: number; examples: string[] } {
  return { count: skipped.count, examples: [...skipped.examples] };
}

/**
 * Streams a JSONL file (or a named stream such as stdin) line by line; blank lines are skipped.
 * A line that is not JSON goes to invalidLine (an error, or skipped under --skip-invalid);
 * `invalid: 'yield'` hands it to the caller instead, as `{lineNumber, error}`.
 */
export async function* readJsonl<T = unknown>(
  source: string | { stream: NodeJS.ReadableStream; name: string },
  opts: { invalid?: 'policy' | 'yield' } = {},
): AsyncGenerator<JsonlLine<T>> {
  const file = typeof source === 'string' ? source : source.name;
  const input = typeof source === 'string' ? fs.createReadStream(source, 'utf8') : source.stream;
  const rl = readline.createInterface({ input, crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const line of rl) {
    lineNumber++;
    if (line.trim() === '') continue;
    let value: T;
    try {
      value = JSON.parse(line) as T;
    } catch (e) {
      const error = `${file}:${lineNumber}: invalid JSON (${(e as Error).message})`;
      if (opts.invalid === 'yield') yield { lineNumber, error };
      else invalidLine(error);
      continue;
    }
    yield { lineNumber, value };
  }
}

/** Reads a whole JSONL file; throws on the first malformed line (for small, trusted files). */
export function readJsonlSync<T = unknown>(file: string): T[] {
  return parseJsonl<T>(fs.readFileSync(file, 'utf8'), file);
}

/**
 * JSONL text (a file's content or a helper process's stdout) to records; blank lines are
 * skipped, a malformed one throws a UserError naming `source`:line.
 */
export function parseJsonl<T = unknown>(text: string, source: string): T[] {
  const out: T[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      out.push(JSON.parse(line) as T);
    } catch (e) {
      throw new UserError(`${source}:${i + 1}: invalid JSON (${(e as Error).message})`);
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

/**
 * A new output file that appears under its name only when complete: records go to a hidden
 * sibling (`.NAME.partial-PID`), commit() renames it into place, abort() removes it. A failed
 * command therefore never leaves a partial --out behind.
 */
export class AtomicJsonlWriter {
  private readonly writer: JsonlWriter;
  readonly partial: string;
  constructor(readonly file: string) {
    this.partial = path.join(path.dirname(path.resolve(file)), `.${path.basename(file)}.partial-${process.pid}`);
    this.writer = new JsonlWriter(this.partial, false);
  }
  write(record: unknown): void {
    this.writer.write(record);
  }
  commit(): void {
    this.writer.close();
    fs.renameSync(this.partial, this.file);
  }
  abort(): void {
    try {
      this.writer.close();
    } catch {
      // already closed
    }
    fs.rmSync(this.partial, { force: true });
  }
}


/** Whether --skip-invalid is on (stages that pre-validate their input check this). */
export function skippingInvalid(): boolean {
  return policy.skip;
}

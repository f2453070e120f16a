import { spawn } from 'child_process';
import { parseJsonl } from '../util/jsonl';
import { assetPath } from '../util/paths';

/** What src/programs/normalize.py reports about one program's source (see that file). */
export interface CodeFacts {
  ok: boolean;
  error?: string;
  /** Hash of the normalized AST (names alpha-renamed, constants kept): dedupe/split/decontamination key. */
  ast?: string;
  /** Hash with constants stripped too: a coarser skeleton key, for diversity reports only. */
  shape?: string;
  imports?: string[];
  /** Nondeterministic/unsafe builtins the code mentions (id, hash, open, eval, ...). */
  risky?: string[];
}

/**
 * Parses programs with Python's own `ast` module (one python3 process for the whole list) and
 * returns their facts in input order. The code is parsed, never run.
 */
export function codeFacts(codes: string[]): Promise<CodeFacts[]> {
  if (codes.length === 0) return Promise.resolve([]);
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [assetPath('src/programs/normalize.py')], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) {
        reject(new Error(`normalize.py exited with ${code}: ${Buffer.concat(err).toString('utf8').slice(-2000)}`));
        return;
      }
      let facts: CodeFacts[];
      try {
        facts = parseJsonl<CodeFacts>(Buffer.concat(out).toString('utf8'), 'normalize.py output');
      } catch (e) {
        reject(e as Error);
        return;
      }
      if (facts.length !== codes.length) {
        reject(new Error(`normalize.py returned ${facts.length} results for ${codes.length} programs`));
        return;
      }
      resolve(facts);
    });
    child.stdin.on('error', () => undefined); // reported through 'close'
    child.stdin.end(codes.map((code) => JSON.stringify({ code })).join('\n') + '\n');
  });
}

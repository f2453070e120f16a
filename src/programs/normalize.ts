import { parseJsonl } from '../util/jsonl';
import { assetPath } from '../util/paths';
import { runPythonScript } from '../util/python_script';

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
export async function codeFacts(codes: string[]): Promise<CodeFacts[]> {
  if (codes.length === 0) return [];
  const stdout = await runPythonScript('python3', assetPath('src/programs/normalize.py'), codes.map((code) => JSON.stringify({ code })).join('\n') + '\n');
  const facts = parseJsonl<CodeFacts>(stdout, 'normalize.py output');
  if (facts.length !== codes.length) throw new Error(`normalize.py returned ${facts.length} results for ${codes.length} programs`);
  return facts;
}

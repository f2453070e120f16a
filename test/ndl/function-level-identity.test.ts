import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { defaultSamplerConfig } from '../../src/ndl/config';
import { allStepDocuments, sampleDocuments } from '../../src/ndl/generate';
import { traceInProcess } from '../../src/trace/inprocess';
import { pythonVersion, traceBatch } from '../../src/trace/index';
import type { ProgramRecord, TraceRecord } from '../../src/trace/types';

/**
 * Repository-level traces (docs/ndl.md, "Repository documents") changed the tracer, the sandbox
 * protocol, the trees and the formatter; function-level traces and documents must be byte for
 * byte what they were. DIGEST was computed by the same steps with the code of commit ee7d787
 * (before those changes; its dist built in a worktree) on Python 3.11.7: the in-process and
 * sandboxed traces of the ndl and debugger fixture programs, their all-step documents, four
 * sampled documents each and two under a 400-token budget.
 */
const DIGEST = '091d1c40583ddbb7a87b12097f3d0112c8ad50e7a15aee2350c539637611721c';
const PYTHON = '3.11.7';

function programs(): ProgramRecord[] {
  return ['ndl', 'debugger'].flatMap((d) =>
    fs
      .readFileSync(path.join(__dirname, '..', 'fixtures', d, 'programs.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as ProgramRecord),
  );
}

it('function-level traces and documents are byte-identical to those before repository-level traces', async () => {
  // The traces hold the Python version and differ between versions: the digest is for this one.
  expect(pythonVersion()).toBe(PYTHON);
  const progs = programs();
  const traces = traceInProcess(progs);
  const sandboxed: TraceRecord[] = [];
  for await (const t of traceBatch(progs, { isolation: 'guards', workers: 1 })) sandboxed.push(t);
  const h = createHash('sha256');
  h.update(JSON.stringify(traces));
  h.update(JSON.stringify(sandboxed.map((t) => ({ ...t, isolation: undefined }))));
  const budget = { ...defaultSamplerConfig(), maxTokens: 400 };
  let docs = 0;
  for (const t of traces) {
    for (const d of [...allStepDocuments(t), ...sampleDocuments(t, 7, 4, defaultSamplerConfig()).records, ...sampleDocuments(t, 7, 2, budget).records]) {
      h.update(d.text + '\0');
      docs++;
    }
  }
  expect(traces).toHaveLength(44);
  expect(docs).toBeGreaterThan(300);
  expect(h.digest('hex')).toBe(DIGEST);
});

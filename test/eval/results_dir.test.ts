import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { resultsDir } from '../../src/eval/load';

describe('resultsDir', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-results-dir-'));
  const run = path.join(tmp, 'run');
  beforeAll(() => {
    for (const d of ['checkpoints/step-00000100', 'averaged']) fs.mkdirSync(path.join(run, d), { recursive: true });
    fs.writeFileSync(path.join(run, 'metrics.jsonl'), '');
    fs.mkdirSync(path.join(tmp, 'imported'), { recursive: true });
  });
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("puts a run's checkpoints' results, the averaged one's too, in RUN/eval", () => {
    expect(resultsDir(undefined, path.join(run, 'checkpoints', 'step-00000100'))).toBe(path.join(run, 'eval'));
    expect(resultsDir(undefined, path.join(run, 'averaged'))).toBe(path.join(run, 'eval'));
  });

  it('puts a checkpoint outside a run beside itself, and --out wins', () => {
    expect(resultsDir(undefined, path.join(tmp, 'imported'))).toBe(path.join(tmp, 'imported', 'eval'));
    expect(resultsDir(path.join(tmp, 'out'), path.join(run, 'averaged'))).toBe(path.join(tmp, 'out'));
    expect(fs.existsSync(path.join(tmp, 'out'))).toBe(true);
  });
});

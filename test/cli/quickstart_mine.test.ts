import * as fs from 'fs';
import * as path from 'path';
import { mineQuickstartFunctions } from '../../src/cli/quickstart_mine';
import { UserError } from '../../src/util/errors';
import { tempDir } from '../helpers/tmp';

describe("the quickstart's mining stage", () => {
  const dir = tempDir('quickstart-mine');
  const saved = process.env.NDBG_CACHE;
  beforeAll(() => {
    // A cache of its own: the pins below must not be found installed.
    process.env.NDBG_CACHE = path.join(dir, 'cache');
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.NDBG_CACHE;
    else process.env.NDBG_CACHE = saved;
  });

  test('a list pip cannot install is one message naming it, which offers the standard library alone', async () => {
    const list = path.join(dir, 'bad.txt');
    fs.writeFileSync(list, 'ndbg-no-such-distribution==0.0.1\n');
    const mining = mineQuickstartFunctions({ minePackages: list, seed: 0, workers: 1, splits: ['test'] }, dir, () => undefined);
    await expect(mining).rejects.toThrow(UserError);
    await expect(mineQuickstartFunctions({ minePackages: list, seed: 0, workers: 1, splits: ['test'] }, dir, () => undefined)).rejects.toThrow(
      /^--mine-packages .*bad\.txt: python3 -m pip install .* failed .*; with no package index, pass --mine-packages none to mine the standard library alone$/,
    );
    expect(fs.existsSync(path.join(dir, 'mined.jsonl'))).toBe(false);
  }, 120_000);
});

import * as fs from 'fs';
import * as path from 'path';
import { installPinned, pinnedPackages, pinnedPackagesDir } from '../../src/programs/mine_packages';
import { packageFiles } from '../../src/programs/mine_corpus';
import { UserError } from '../../src/util/errors';
import { tempDir } from '../helpers/tmp';

const root = path.resolve(__dirname, '..', '..');
const dir = tempDir('mine-packages');
const write = (name: string, text: string) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  return f;
};

describe('pinned package lists', () => {
  test('reads name==version lines, skipping comments and blank lines', () => {
    expect(pinnedPackages(write('ok.txt', '# a comment\n\nmore-itertools==11.1.0  # trailing\njaraco.functools==4.4.0\n'))).toEqual(['more-itertools==11.1.0', 'jaraco.functools==4.4.0']);
  });

  test('refuses an unpinned line or an empty list, naming the file and line', () => {
    const loose = write('loose.txt', 'toolz==1.1.0\ntabulate>=0.9\n');
    expect(() => pinnedPackages(loose)).toThrow(UserError);
    expect(() => pinnedPackages(loose)).toThrow(`${loose}:2: expected name==version, got "tabulate>=0.9"`);
    expect(() => pinnedPackages(write('empty.txt', '# nothing\n'))).toThrow(/empty\.txt: no packages listed/);
    expect(() => pinnedPackages(path.join(dir, 'absent.txt'))).toThrow(/absent\.txt: no such package list/);
  });

  test("the quickstart's and the mining bench's lists pin each package once", () => {
    for (const list of [path.join(root, 'configs', 'mine-packages-quickstart.txt'), path.join(root, 'bench', 'mine-packages.txt')]) {
      const pins = pinnedPackages(list);
      expect(pins.length).toBeGreaterThanOrEqual(5);
      const names = pins.map((p) => p.split('==')[0].toLowerCase().replace(/[-_.]+/g, '-'));
      expect(new Set(names).size).toBe(names.length);
    }
  });

  test('the cache directory depends on the pins and the Python version, not their spelling elsewhere', () => {
    const a = pinnedPackagesDir(['toolz==1.1.0'], '3.11.7');
    expect(pinnedPackagesDir(['toolz==1.1.0'], '3.11.7')).toBe(a);
    expect(pinnedPackagesDir(['toolz==1.1.1'], '3.11.7')).not.toBe(a);
    expect(pinnedPackagesDir(['toolz==1.1.0'], '3.12.1')).not.toBe(a);
  });
});

describe('installPinned (real pip)', () => {
  const target = path.join(dir, 'site');
  const pins = ['pandocfilters==1.5.1'];
  let skip = '';
  beforeAll(() => {
    try {
      installPinned(pins, target, 'python3', 'test');
    } catch (e) {
      // A clone with no package index cannot install; CI installs from its own (.ci/run), so it must.
      if (process.env.CI || !(e instanceof UserError)) throw e;
      skip = (e as Error).message;
    }
  }, 120_000);

  test('installs the pins without dependencies into the directory, once', () => {
    if (skip) return void process.stderr.write(`skipped: pip could not install ${pins[0]} (${skip})\n`);
    const files = packageFiles(target);
    expect(files.some((f) => f.origin.package === 'pandocfilters' && f.origin.version === '1.5.1')).toBe(true);
    // The stamp says the same pins are there: no second pip run.
    expect(installPinned(pins, target, 'python3', 'test')).toEqual({ installed: false, seconds: 0 });
  });

  test('a pin pip cannot find is one message naming the list, and no stamp', () => {
    if (skip) return void process.stderr.write(`skipped: pip could not install ${pins[0]} (${skip})\n`);
    const bad = path.join(dir, 'bad');
    expect(() => installPinned(['ndbg-no-such-distribution==0.0.1'], bad, 'python3', '--mine-packages bad.txt')).toThrow(/^--mine-packages bad\.txt: python3 -m pip install --no-deps --target .* failed \(exit 1\): .*ndbg-no-such-distribution/);
    expect(fs.existsSync(path.join(bad, '.ndbg-installed'))).toBe(false);
  }, 120_000);
});

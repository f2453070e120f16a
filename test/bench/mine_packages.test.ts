import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { BenchUsageError } from '../../bench/flags';
import { pinnedPackages } from '../../bench/mine';
import { assetPath } from '../../src/util/paths';

describe('the mine bench package list', () => {
  it('pins every package of the shipped list to one version', () => {
    const pins = pinnedPackages(assetPath('bench/mine-packages.txt'));
    expect(pins.length).toBeGreaterThanOrEqual(5);
    const names = pins.map((p) => p.split('==')[0].toLowerCase().replace(/[-_.]+/g, '-'));
    expect(new Set(names).size).toBe(names.length);
  });

  it('refuses a line that is not name==version, naming the file and line', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-pins-')), 'pins.txt');
    fs.writeFileSync(file, '# a comment\ntoolz==1.1.0\n\nboltons>=26\n');
    expect(() => pinnedPackages(file)).toThrow(BenchUsageError);
    expect(() => pinnedPackages(file)).toThrow(`${file}:4: expected name==version, got "boltons>=26"`);
    fs.writeFileSync(file, '# nothing\n');
    expect(() => pinnedPackages(file)).toThrow(/no packages listed/);
  });
});

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { Decontaminator, searchedText } from '../../src/data/decontaminate';
import { findFunctions, functionShape } from '../../src/data/python_functions';
import { buildFrom, FIXTURES, tmpDir } from './helpers';

/**
 * Documents that contain an eval program are dropped from every source kind. The program-key
 * rule parses functions with python3 (src/programs/normalize.py), as `ndbg programs
 * decontaminate` does; without python3 those tests say so and skip.
 */
const root = path.resolve(__dirname, '../..');
const dir = tmpDir('decontaminate');
const hasPython = spawnSync('python3', ['-c', 'import ast'], { encoding: 'utf8' }).status === 0;
const skipWithoutPython = (): boolean => {
  if (!hasPython) process.stderr.write('skipped: python3 is not on PATH (decontamination parses functions with it)\n');
  return !hasPython;
};

const CRUX = fs
  .readFileSync(path.join(root, 'evalsets', 'cruxeval.jsonl'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { id: string; code: string; input: string });
const sample0 = CRUX.find((p) => p.id === 'sample_0')!; // def f(nums): output = [] ... output.sort(reverse=True) ...
const sample2 = CRUX.find((p) => p.id === 'sample_2')!; // def f(text): new_text = list(text) ...

/** sample_0 renamed, reformatted, with a docstring and a comment: the same normalized AST. */
const SAMPLE0_RENAMED = `def count_pairs(values):
    """Pairs of (count, value), most frequent first."""
    result = []   # built up below
    for item in values:
        result.append((values.count(item), item))
    result.sort(reverse=True)
    return result`;

const MODULE = (inner: string) => `import os\n\n\ndef unrelated(path):\n    return os.path.basename(path)\n\n\nclass Helper:\n${inner.split('\n').map((l) => `    ${l}`).join('\n')}\n`;

/** sample_2 pasted into a web page whose indentation was lost. */
const WEB_PAGE = `Here is a puzzle I found:\n\n${sample2.code.split('\n').map((l) => l.trim()).join('\n')}\n\nWhat does f('hbtofdeiequ') return?`;

describe('finding functions in documents', () => {
  it('finds nested and multi-line definitions, dedented', () => {
    const fns = findFunctions('class A:\n    def m(self,\n          x):\n        return x\n\n    # end\nz = 1\ndef g(): return 2\n');
    expect(fns).toEqual([
      { code: 'def m(self,\n      x):\n    return x', indent: 4 },
      { code: 'def g(): return 2', indent: 0 },
    ]);
  });

  it('gives a renamed, reformatted, documented copy the shape of the original', () => {
    expect(functionShape(SAMPLE0_RENAMED)).toBe(functionShape(sample0.code));
    expect(functionShape(SAMPLE0_RENAMED)).toBe('def for in return|append count sort');
    expect(functionShape("def f(s) -> None:\n    return f'{s.upper()}' + \"x.lower()\"")).toBe('def return|upper');
  });
});

describe('Decontaminator', () => {
  it('matches by program key (renamed copy, inside a class) and by lines (indentation lost); NDL by its code context', async () => {
    if (skipWithoutPython()) return;
    const d = await Decontaminator.fromPrograms([sample0, sample2]);
    const ndl = fs.readFileSync(path.join(FIXTURES, 'ndl.jsonl'), 'utf8').split('\n')[0];
    const ndlText = (JSON.parse(ndl) as { text: string }).text;
    const contaminatedNdl = ndlText.replace(/def count\(s, t\):[\s\S]*?return n\n/, `${sample2.code}\n`);
    const verdicts = await d.check([
      MODULE(SAMPLE0_RENAMED),
      WEB_PAGE,
      MODULE('def count_pairs(values):\n    return sorted(values)'),
      searchedText('ndl', ndlText),
      searchedText('ndl', contaminatedNdl),
    ]);
    expect(verdicts).toEqual([{ evalIds: ['sample_0'] }, { evalIds: ['sample_2'] }, undefined, undefined, { evalIds: ['sample_2'] }]);
  });

  it('finds nothing of the 800 CruxEval programs in the data fixtures', async () => {
    if (skipWithoutPython()) return;
    const d = await Decontaminator.fromFiles([path.join(root, 'evalsets', 'cruxeval.jsonl')]);
    expect(d.programs).toBe(CRUX.length);
    const texts = [
      fs.readFileSync(path.join(FIXTURES, 'code', 'count.py'), 'utf8'),
      fs.readFileSync(path.join(FIXTURES, 'code', 'pkg', 'util.py'), 'utf8'),
      ...fs.readFileSync(path.join(FIXTURES, 'web.jsonl'), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { text: string }).text),
    ];
    expect(await d.check(texts)).toEqual(texts.map(() => undefined));
  });
});

describe('data build --against', () => {
  it('drops contaminated documents of every kind and records what it found', async () => {
    if (skipWithoutPython()) return;
    const evalSet = path.join(dir, 'eval.jsonl');
    fs.writeFileSync(evalSet, [sample0, sample2].map((p) => JSON.stringify(p)).join('\n') + '\n');
    const code = path.join(dir, 'code.jsonl');
    fs.writeFileSync(code, [MODULE(SAMPLE0_RENAMED), MODULE('def other(x):\n    return x * 2')].map((text, i) => JSON.stringify({ id: `c${i}`, text })).join('\n') + '\n');
    const web = path.join(dir, 'web.jsonl');
    fs.writeFileSync(web, [WEB_PAGE, 'Nothing to see here.'].map((text) => JSON.stringify({ text })).join('\n') + '\n');
    const ndlLines = fs.readFileSync(path.join(FIXTURES, 'ndl.jsonl'), 'utf8').trim().split('\n');
    const first = JSON.parse(ndlLines[0]) as { id: string; text: string };
    const contaminated = { ...first, id: 'copied', text: first.text.replace(/def count\(s, t\):[\s\S]*?return n\n/, `${sample2.code}\n`) };
    const ndl = path.join(dir, 'ndl.jsonl');
    fs.writeFileSync(ndl, [...ndlLines, JSON.stringify(contaminated)].join('\n') + '\n');

    const sources = [`code=${code}:code`, `web=${web}:text`, `traces=${ndl}:ndl`];
    const m = await buildFrom(path.join(dir, 'clean'), sources, { against: [evalSet], valFraction: 0 });
    expect(m.sources.map((s) => s.decontamination)).toEqual([
      { documents: 1, evalPrograms: 1, evalIds: ['sample_0'] },
      { documents: 1, evalPrograms: 1, evalIds: ['sample_2'] },
      { documents: 1, evalPrograms: 1, evalIds: ['sample_2'] },
    ]);
    expect(m.sources.map((s) => s.train.documents)).toEqual([1, 1, ndlLines.length]);
    expect(m.filters?.against).toEqual([evalSet]);

    const plain = await buildFrom(path.join(dir, 'plain'), sources, { valFraction: 0 });
    expect(plain.sources.map((s) => s.train.documents)).toEqual([2, 2, ndlLines.length + 1]);
    expect(plain.sources.map((s) => s.decontamination)).toEqual([undefined, undefined, undefined]);
  });

  it('a bad eval set fails before anything is written', async () => {
    const bad = path.join(dir, 'bad-eval.jsonl');
    fs.writeFileSync(bad, '{"id": "x"}\n');
    const out = path.join(dir, 'never');
    await expect(buildFrom(out, [`web=${path.join(FIXTURES, 'web.jsonl')}:text`], { against: [bad] })).rejects.toThrow(/bad-eval\.jsonl/);
    expect(fs.existsSync(out)).toBe(false);
  });
});

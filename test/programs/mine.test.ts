import { execFileSync } from 'child_process';
import * as path from 'path';
import { mineFunctions, type MinedRecord, type MineOptions } from '../../src/programs/mine';
import { directoryFiles, readDistMetadata } from '../../src/programs/mine_corpus';
import { programKeys, splitOf } from '../../src/programs/splits';
import { candidateInputs, diagnoseWrongType, kindOfAnnotation, kindsOfName, pyTypeOfArg, redrawCalls, type FunctionHints } from '../../src/programs/mine_inputs';
import { Rng } from '../../src/util/rng';
import { rawTracer } from '../../src/trace/tracers';

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'mine');

function options(): MineOptions {
  return {
    files: directoryFiles(FIXTURE, { package: 'pkg', version: '1.0', license: 'MIT' }),
    tracer: rawTracer().trace,
    seed: 0,
    candidates: 8,
    perFunction: 4,
    minPerFunction: 2,
    minLines: 3,
    maxFunctionLines: 40,
    maxCodeLines: 80,
    maxEvents: 1000,
  };
}

async function mineFixture() {
  const records: MinedRecord[] = [];
  const summary = await mineFunctions(options(), (r) => records.push(r));
  return { records, summary };
}

describe('programs mine', () => {
  let mined: Awaited<ReturnType<typeof mineFixture>>;
  beforeAll(async () => {
    mined = await mineFixture();
  }, 120000);

  const byFunction = (name: string) => mined.records.filter((r) => r.source.function === name);

  it('keeps functions with several distinct calls and their provenance', () => {
    const vowels = byFunction('count_vowels');
    expect(vowels.length).toBeGreaterThanOrEqual(2);
    expect(new Set(vowels.map((r) => r.input)).size).toBe(vowels.length);
    // The doctest's call is tried first, verbatim.
    expect(vowels.map((r) => r.input)).toContain("'banana'");
    expect(vowels[0].source).toEqual({ package: 'pkg', version: '1.0', license: 'MIT', file: 'pkg/text.py', module: 'pkg.text', function: 'count_vowels', line: 9 });
    expect(vowels[0].entry).toBe('count_vowels');
  });

  it('brings the module-level definitions a function references, across modules', () => {
    const squash = byFunction('squash');
    expect(squash.length).toBeGreaterThanOrEqual(2);
    const code = squash[0].code;
    expect(code).toMatch(/^import re\n/);
    expect(code).toContain("_WS = re.compile(r'\\s+')");
    expect(code).toContain('def clamp(x, lo, hi):');
    expect(code).not.toContain('VOWELS'); // not referenced by squash
    expect(code).not.toContain('Small string helpers'); // docstrings are dropped
    expect(byFunction('count_vowels')[0].code).not.toContain('>>>');
  });

  it('resolves annotations lazily when a name only annotations read is not importable', () => {
    // Sequence is imported under `if TYPE_CHECKING:`; Any is imported by both modules, the same
    // import, so one binding rather than a name conflict.
    const code = byFunction('heaviest')[0].code;
    expect(code).toMatch(/^from __future__ import annotations\nfrom typing import Any\n\n/);
    expect(code.match(/from typing import Any/g)).toHaveLength(1);
    expect(code).toContain('def weigh(item: Any, bonus: int) -> int:');
    expect(code).not.toContain('collections.abc');
    // Code whose annotations all resolve stays as written.
    expect(byFunction('squash')[0].code).not.toContain('__future__');
  });

  it('mines a decorated function with its decorator, and skips overload stubs', () => {
    const steps = byFunction('steps_to_one');
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps[0].code).toMatch(/^import functools\n\n@functools\.lru_cache\(maxsize=None\)\ndef steps_to_one\(n\):/);
    expect(mined.summary.extraction.overload_stub).toBe(2);
  });

  it('uses literal call sites from test files as inputs, and never mines the tests', () => {
    expect(byFunction('total_positive').map((r) => r.input)).toContain('[3, -1, 4]');
    expect(mined.records.some((r) => r.source.file.includes('tests/'))).toBe(false);
  });

  it('passes a builtin for a parameter the code calls', () => {
    const applied = byFunction('apply_all');
    expect(applied.length).toBeGreaterThanOrEqual(2);
    for (const r of applied) expect(r.input).toMatch(/^(len|str|abs|bool|str\.upper|sorted|repr|int), \[/);
  });

  it('drops files, imports outside the allow-list, generators and one-line bodies, and counts why', () => {
    for (const name of ['reads_a_file', 'uses_os', '_gen', 'shout']) expect(byFunction(name)).toEqual([]);
    expect(mined.summary.extraction.generator_function).toBe(1);
    expect(mined.summary.callRejections.nondeterministic_builtin).toBeGreaterThan(0);
    expect(mined.summary.callRejections.forbidden_import).toBeGreaterThan(0);
    expect(mined.summary.callRejections.too_few_lines).toBeGreaterThan(0);
    // Batches in flight add to the counts in the order their calls finish; the manifest's keys must not follow it.
    const reasons = Object.keys(mined.summary.callRejections);
    expect(reasons).toEqual([...reasons].sort());
    expect(mined.summary.functionsKept).toBe(new Set(mined.records.map((r) => r.source.function)).size);
    expect(mined.summary.perPackage).toEqual({ pkg: mined.summary.functionsKept });
    expect(mined.summary.callsPerPackage).toEqual({ pkg: mined.summary.callsTried });
    expect(mined.summary.extractionSeconds).toBeGreaterThan(0);
    // A Python process that parsed the fixture: some MiB, not 0 (a lost field) nor KiB read as MiB.
    expect(mined.summary.extractionPeakMiB).toBeGreaterThan(5);
    expect(mined.summary.extractionPeakMiB).toBeLessThan(2000);
  });

  it('gives the same records for the same seed, and other inputs for another', async () => {
    const again = await mineFixture();
    expect(JSON.stringify(again.records)).toBe(JSON.stringify(mined.records));
    const other: MinedRecord[] = [];
    await mineFunctions({ ...options(), seed: 1 }, (r) => other.push(r));
    expect(other.map((r) => r.input)).not.toEqual(mined.records.map((r) => r.input));
  }, 120000);

  it('gives the same records in the same order whatever the batches in flight', async () => {
    const small: MinedRecord[] = [];
    const summary = await mineFunctions({ ...options(), batchSize: 2 }, (r) => small.push(r));
    expect(summary.functionsExtracted).toBeGreaterThan(3 * 2); // more batches than are in flight
    expect(JSON.stringify(small)).toBe(JSON.stringify(mined.records));
    // Extraction counts, modules and functions seen too; only the time and the memory differ.
    expect({ ...summary, extractionSeconds: 0, extractionPeakMiB: 0 }).toEqual({ ...mined.summary, extractionSeconds: 0, extractionPeakMiB: 0 });
  }, 120000);

  it('calls only the wanted functions, and gives them the records a whole mine gives them', async () => {
    // Half the functions by program key, as the quickstart keeps one split of them.
    const half = (key: string) => splitOf(key, { train: 0.5, validation: 0, test: 0.5 }) === 'test';
    const keys = await programKeys(mined.records);
    const expected = mined.records.filter((_, i) => half(keys[i]));
    const some: MinedRecord[] = [];
    const summary = await mineFunctions({ ...options(), wanted: half }, (r) => some.push(r));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(mined.records.length);
    expect(JSON.stringify(some)).toBe(JSON.stringify(expected));
    expect(summary.functionRejections.not_wanted).toBeGreaterThan(0);
    expect(summary.callsTried).toBeLessThan(mined.summary.callsTried);
  }, 120000);

  it('re-draws calls that failed on their input: a function only a re-drawn dict with the key feeds', async () => {
    // label_of(record, key) reads record[key]: drawn lists fail with a TypeError, the re-drawn
    // dicts with a KeyError, and dicts with the key put in run it through.
    expect(byFunction('label_of')).toEqual([]);
    const records: MinedRecord[] = [];
    const summary = await mineFunctions({ ...options(), redraws: 8 }, (r) => records.push(r));
    const labels = records.filter((r) => r.source.function === 'label_of');
    expect(labels.length).toBeGreaterThanOrEqual(2);
    for (const r of labels) expect(r.input).toMatch(/^\{('[^']*'): .*\}, \1$/);
    expect(summary.callsRedrawn).toBeGreaterThan(0);
    expect(summary.keptFromRedraws).toBeGreaterThanOrEqual(labels.length);
    expect(summary.functionsKept).toBeGreaterThan(mined.summary.functionsKept);
    expect(summary.callsTried).toBe(mined.summary.callsTried + summary.callsRedrawn);
  }, 120000);

  it('runs the second wave of candidates only for functions the first left short', () => {
    const { callsTried, callsRedrawn, functionsExtracted, callRejections } = mined.summary;
    expect(callsRedrawn).toBe(0);
    // Every function has 8 candidates; those with 4 distinct keeps after 4 calls skip the rest.
    expect(callsTried).toBeLessThan(functionsExtracted * 8);
    expect(callsTried).toBeGreaterThan(functionsExtracted * 4);
    expect(byFunction('steps_to_one')).toHaveLength(4);
    expect(callRejections.enough_for_function ?? 0).toBeLessThan(functionsExtracted);
  });

  it('keeps a call only when the check tracer gives the same trace', async () => {
    const tracer = rawTracer().trace;
    // A check tracer whose runs end otherwise: every would-be keep is found nondeterministic.
    const checkTracer = async (programs: Parameters<typeof tracer>[0]) => (await tracer(programs)).map((run) => ({ ...run, error: 'not the first run' }));
    const records: MinedRecord[] = [];
    const summary = await mineFunctions({ ...options(), checkTracer }, (r) => records.push(r));
    expect(records).toEqual([]);
    expect(summary.callRejections.nondeterministic).toBeGreaterThan(0);
  }, 120000);

  it('drops functions whose code is in the evaluation set', async () => {
    const { programKeys } = await import('../../src/programs/splits');
    const vowels = byFunction('count_vowels')[0];
    const [key] = await programKeys([{ code: vowels.code }]);
    const kept: MinedRecord[] = [];
    const summary = await mineFunctions({ ...options(), against: new Set([key]) }, (r) => kept.push(r));
    expect(kept.some((r) => r.source.function === 'count_vowels')).toBe(false);
    expect(summary.functionRejections.contaminated).toBe(1);
  }, 120000);
});

describe('mining inputs and metadata', () => {
  it('reads annotations as value kinds', () => {
    expect(kindOfAnnotation('int')).toBe('int');
    expect(kindOfAnnotation('Optional[str]')).toBe('str');
    expect(kindOfAnnotation('list[str]')).toBe('list_str');
    expect(kindOfAnnotation('Sequence[int]')).toBe('list_int');
    expect(kindOfAnnotation('Dict[str, int]')).toBe('dict');
    expect(kindOfAnnotation('Widget')).toBeUndefined();
  });

  it('draws strings for a parameter used as a string, ints for one passed to range', () => {
    const hints = {
      params: [
        { name: 's', annotation: null, default: null, has_default: false, uses: ['str'], values: [] },
        { name: 'n', annotation: null, default: null, has_default: false, uses: ['int'], values: [] },
      ],
      required: 2,
      doctests: [],
      callsites: [],
      strings: [],
      ints: [],
    };
    const calls = candidateInputs(hints, 20, Rng.from(0, 'test'));
    expect(calls.length).toBe(20);
    const typed = calls.filter((c) => /^(['"]).*\1, -?\d+$/.test(c));
    expect(typed.length).toBeGreaterThan(10);
  });

  it('reads what a parameter holds from its conventional name', () => {
    expect(kindsOfName('s')).toEqual(['str']);
    expect(kindsOfName('file_name')).toEqual(['str']);
    expect(kindsOfName('n_items')).toEqual(['int']);
    expect(kindsOfName('words')).toEqual(['list_str']);
    expect(kindsOfName('keyfunc')).toEqual(['fn1']);
    expect(kindsOfName('_mapping')).toEqual(['dict']);
    expect(kindsOfName('is_valid')).toEqual(['bool']);
    expect(kindsOfName('widget')).toEqual([]);
  });

  it('reads which argument type a wrong-type message blames and which it wants', () => {
    expect(diagnoseWrongType("AttributeError: 'int' object has no attribute 'split'")).toEqual([{ bad: 'int', want: ['str'] }]);
    expect(diagnoseWrongType('TypeError: can only concatenate str (not "int") to str')).toEqual([
      { bad: 'int', want: ['str', 'char'] },
      { bad: 'str', want: ['int'] },
    ]);
    expect(diagnoseWrongType('TypeError: list indices must be integers or slices, not str')).toEqual([
      { bad: 'list', want: ['dict'] },
      { bad: 'str', want: ['int'] },
    ]);
    expect(diagnoseWrongType("TypeError: 'float' object cannot be interpreted as an integer")).toEqual([{ bad: 'float', want: ['int'] }]);
    expect(diagnoseWrongType("TypeError: object of type 'int' has no len()")[0].bad).toBe('int');
    expect(diagnoseWrongType("TypeError: 'str' object is not callable")).toEqual([{ bad: 'str', want: ['fn1'] }]);
    expect(['len', 'str.upper', 'int'].map(pyTypeOfArg)).toEqual(['builtin_function_or_method', 'method_descriptor', 'type']);
    expect(diagnoseWrongType('ValueError: math domain error')).toEqual([]);
    expect(['1', "'a'", "b'x'", '[1]', '{}', "{'a': 1}", '{1, 2}', '(1,)', '2.5', 'None', 'True'].map(pyTypeOfArg)).toEqual(['int', 'str', 'bytes', 'list', 'dict', 'dict', 'set', 'tuple', 'float', 'NoneType', 'bool']);
  });

  it('re-draws the blamed argument of the wanted kind, and puts a missing key into a dict', () => {
    const param = (name: string) => ({ name, annotation: null, default: null, has_default: false, uses: [], values: [] });
    const h: FunctionHints = { params: [param('s'), param('n')], required: 2, doctests: [], callsites: [], strings: [], ints: [] };
    const seen = new Set<string>();
    const [fixed] = redrawCalls(h, { args: ['5', '3'], error: "AttributeError: 'int' object has no attribute 'upper'" }, Rng.from(0, 't'), seen, 4);
    // Both arguments were ints, so both are blamed and re-drawn as strings.
    expect(fixed.args?.map(pyTypeOfArg)).toEqual(['str', 'str']);
    expect(seen.has(fixed.input)).toBe(true);
    const [keyed] = redrawCalls(h, { args: ["{'a': 1}", "'k'"], error: "KeyError: 'k'" }, Rng.from(0, 't'), seen, 4);
    expect(keyed.input).toMatch(/^\{'k': .+, 'a': 1\}, 'k'$/);
    expect(redrawCalls(h, { args: ['1', '2'], error: 'ValueError: no' }, Rng.from(0, 't'), seen, 4)).toEqual([]);
  });

  it("walks a tree in ast.walk's order (the extractor's call sites and closures depend on it)", () => {
    // Three real modules of the standard library, nested functions, comprehensions and all.
    const script = [
      'import ast, sys, inspect, json, textwrap, argparse',
      "sys.path.insert(0, sys.argv[1])",
      'from mine_hints import walk',
      'sig = lambda ns: [(type(n).__name__, getattr(n, "lineno", None), getattr(n, "col_offset", None)) for n in ns]',
      'trees = [ast.parse(inspect.getsource(m)) for m in (json.decoder, textwrap, argparse)]',
      'print(json.dumps([sig(walk(t)) == sig(ast.walk(t)) and len(walk(t)) for t in trees]))',
    ].join('\n');
    const sameOrder = JSON.parse(execFileSync('python3', ['-c', script, path.join(__dirname, '..', '..', 'src', 'programs')], { encoding: 'utf8' }));
    expect(sameOrder).toHaveLength(3);
    for (const n of sameOrder) expect(n).toBeGreaterThan(1000);
  });

  it('reads a distribution METADATA header', () => {
    const meta = readDistMetadata('Metadata-Version: 2.1\nName: toolz\nVersion: 1.1.0\nLicense: BSD\nClassifier: License :: OSI Approved :: BSD License\n\nLong description\nLicense: not this');
    expect(meta).toEqual({ name: 'toolz', version: '1.1.0', license: 'BSD' });
    expect(readDistMetadata('Name: x\nVersion: 2\nClassifier: License :: OSI Approved :: MIT License\n').license).toBe('MIT License');
  });
});

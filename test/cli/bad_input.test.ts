import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * The bad-input policy, command by command, through the real CLI (dist/, built by
 * test/global-setup.ts): every bad input gets one line `ndbg: ...` naming the flag, file or
 * line, exit code 2, no stack trace; arguments are checked before any work; a malformed JSONL
 * line is an error naming file:line unless --skip-invalid; a failed command leaves no partial
 * output.
 */
const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'bin', 'ndbg.js');
let tmp: string;
const at = (name: string) => path.join(tmp, name);

function ndbg(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd: tmp, encoding: 'utf8', timeout: 60000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const PROGRAM = { id: 'p1', code: 'def f(x):\n    return x + 1\n', input: '3' };

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-badinput-'));
  fs.writeFileSync(at('bad.py'), 'def f(x):\n    y = x +\n    return y\n');
  fs.writeFileSync(at('good.py'), PROGRAM.code);
  fs.writeFileSync(at('loose-pins.txt'), '# not pinned\ntoolz>=1\n');
  fs.writeFileSync(at('programs.jsonl'), JSON.stringify(PROGRAM) + '\n');
  fs.writeFileSync(at('broken.jsonl'), JSON.stringify(PROGRAM) + '\n{"id": "p2", "code": \n' + JSON.stringify({ ...PROGRAM, id: 'p3' }) + '\n');
  fs.writeFileSync(at('docs-broken.jsonl'), '{"id": "d1", "text": "x = 1"}\n{"id": "d2", "text": 5}\n');
  fs.writeFileSync(at('not-json.json'), '{ nope');
  fs.mkdirSync(at('emptydir'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

// [command line, what the one line must say]
const CASES: Array<[string[], RegExp]> = [
  [['nonsense'], /^ndbg: Unknown argument: nonsense/],
  [[], /Pick a command/],
  [['trace'], /give --program FILE\.py --call CALL, or --input programs\.jsonl --out traces\.jsonl/],
  [['trace', '--input', 'programs.jsonl'], /--input needs --out/],
  [['trace', '--program', 'good.py'], /--program needs --call/],
  [['trace', '--program', 'good.py', '--call', 'f(1)', '--input', 'programs.jsonl'], /either --program or --input, not both/],
  [['trace', '--program', 'good.py', '--call', 'f(1)', '--workers', '0'], /--workers must be a positive integer/],
  [['trace', '--program', 'nope.py', '--call', 'f(1)'], /--program nope\.py: ENOENT/],
  [['trace', '--program', 'bad.py', '--call', 'f(3)'], /bad\.py:2: SyntaxError: invalid syntax/],
  [['trace', '--program', 'good.py', '--call', 'f(3'], /--call 'f\(3': SyntaxError: '\(' was never closed/],
  [['trace', '--program', 'good.py', '--call', 'x + 1'], /--call 'x \+ 1': not a call like f\(3\)/],
  [['trace', '--input', 'broken.jsonl', '--out', 'traces-strict.jsonl'], /broken\.jsonl:2: invalid JSON/],
  [['trace', '--isolation', 'nope', '--program', 'good.py', '--call', 'f(1)'], /Invalid values:.*isolation/],
  [['ndl', '--traces', 'nope.jsonl', '--out', 'docs.jsonl'], /--traces nope\.jsonl: no such file/],
  [['ndl', '--traces', 'programs.jsonl', '--out', 'docs.jsonl'], /programs\.jsonl:1: not a trace record/],
  [['ndl', '--traces', 'programs.jsonl', '--out', 'docs.jsonl', '--per-program', '0'], /--per-program must be a positive integer/],
  [['ndl', 'show', '--docs', 'nope.jsonl'], /--docs nope\.jsonl: no such file/],
  [['data', 'build', '--source', 'code=docs-broken.jsonl:text', '--out', 'ds', '--seq-len', '16', '--tokenizer', 'byte', '--workers', '0', '--quiet'], /docs-broken\.jsonl:2: field "text" must be a string/],
  [['data', 'build', '--out', 'ds', '--seq-len', '16'], /Missing required argument: source/],
  [['data', 'inspect', 'emptydir'], /emptydir/],
  [['eval', 'next-state', '--programs', 'programs.jsonl'], /give --checkpoint DIR \(a trained model\) or --oracle/],
  [['eval', 'next-state', '--programs', 'programs.jsonl', '--checkpoint', '/nope'], /checkpoint \/nope does not exist/],
  [['eval', 'next-state', '--programs', 'programs.jsonl', '--oracle', '--actions', 'jump'], /--actions: unknown action "jump"/],
  [['eval', 'cruxeval', '--data', 'programs.jsonl'], /give --checkpoint DIR \(a trained model\) or --oracle/],
  [['eval', 'horizon', '--programs', 'programs.jsonl', '--oracle', '--fractions', '2'], /--fractions: 2 is not in \[0, 1\]/],
  [['eval', 'next-state', '--programs', 'broken.jsonl', '--oracle', '--quiet'], /broken\.jsonl:2: invalid JSON/],
  [['generate', '--checkpoint', '/nope', '--prompt', 'x'], /checkpoint \/nope does not exist/],
  [['generate', '--checkpoint', 'emptydir', '--prompt', 'x'], /checkpoint emptydir has no config\.json/],
  [['export-hf', '--checkpoint', '/nope', '--out', 'hf'], /checkpoint \/nope does not exist/],
  [['import-hf', '/nope', '--out', 'ck'], /Hugging Face model directory \/nope does not exist/],
  [['debug', 'bad.py', '--call', 'f(3)', '--oracle'], /bad\.py:2: SyntaxError/],
  [['debug', 'good.py', '--call', 'f(3)'], /give --checkpoint DIR .* or --oracle/],
  [['debug', 'good.py', '--call', 'f(3)', '--checkpoint', '/nope'], /checkpoint \/nope does not exist/],
  [['debug', 'good.py', '--call', 'f(3)', '--oracle', '--beams', '0'], /--beams must be a positive integer, got 0/],
  [['debug', 'good.py', '--call', 'f(3)', '--oracle', '--walk-steps', '-1'], /--walk-steps must be a non-negative integer, got -1/],
  [['eval', 'next-state', '--programs', 'programs.jsonl', '--oracle', '--walk-steps', '1.5'], /--walk-steps must be a non-negative integer, got 1\.5/],
  [['debug', 'good.py', '--call', 'f(3)', '--oracle', '--beams', '4', '--temperature', '0.5'], /--beams .* does not go with sampling/],
  [['eval', 'next-state', '--programs', 'programs.jsonl', '--oracle', '--beams', '2.5'], /--beams must be a positive integer, got 2\.5/],
  [['oracle', '--program', 'bad.py', '--call', 'f(3)', '--actions', 's'], /bad\.py:2: SyntaxError/],
  [['oracle', '--trace', 'nope.jsonl', '--actions', 's'], /--trace nope\.jsonl: no such file/],
  [['oracle', '--trace', 'broken.jsonl', '--actions', 's', '--id', 'p3'], /broken\.jsonl:2: invalid JSON/],
  [['oracle', 'check'], /give --trace FILE or --programs FILE/],
  [['train', '--out', 'run'], /--config FILE is required/],
  [['train', '--config', 'not-json.json', '--out', 'run'], /not-json\.json/],
  [['train', '--config', 'nope.json', '--out', 'run'], /nope\.json/],
  [['model', 'info'], /model info needs --config FILE/],
  [['tokenizer', 'encode', 'x', '--model', '/nope.model'], /cannot read tokenizer \/nope\.model/],
  [['tokenizer', 'check', 'docs-broken.jsonl'], /docs-broken\.jsonl:2: field "text" is missing or not a string/],
  [['programs', 'generate', '--n', '0', '--out', 'p.jsonl'], /--n 0: expected a positive integer/],
  [['programs', 'split', '--in', 'broken.jsonl', '--out-dir', 'splits'], /broken\.jsonl:2: invalid JSON/],
  [['programs', 'stats', '--in', 'nope.jsonl'], /nope\.jsonl/],
  [['report', '/nope'], /report: \/nope is not a directory/],
  [['programs', 'pydocs', '--dir', '/nope', '--out', 'code.jsonl'], /--dir \/nope: no such directory/],
  [['quickstart', '--minutes', '1', '--bogus-flag'], /Unknown argument: bogus-flag/],
  [['quickstart', '--out', 'qs-share', '--mined-share', '1.5'], /--mined-share 1\.5: expected a share in \[0, 1\)/],
  [['quickstart', '--out', 'qs-pins', '--mine-packages', 'loose-pins.txt'], /loose-pins\.txt:2: expected name==version, got "toolz>=1"/],
];

describe('every command: bad input is one line, exit 2, no stack trace', () => {
  test.each(CASES)('ndbg %j', (args, message) => {
    const r = ndbg(args);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
    expect({ code: r.code, stderr: lines }).toEqual({ code: 2, stderr: [expect.stringMatching(message)] });
    expect(lines[0]).toMatch(/^ndbg: /);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  });

  test('a quickstart option refused up front touches no --out', () => {
    for (const out of ['qs-share', 'qs-pins']) expect(fs.existsSync(at(out))).toBe(false);
  });

  test('an unknown flag is reported once, as typed', () => {
    const r = ndbg(['trace', '--bogus-flag', '--other-thing']);
    expect(r.stderr.trim()).toBe('ndbg: Unknown arguments: bogus-flag, other-thing (see --help)');
  });

  test('eval next-state with neither --checkpoint nor --oracle fails before tracing anything', () => {
    const r = ndbg(['eval', 'next-state', '--programs', 'programs.jsonl']);
    expect(r.stderr).not.toMatch(/trace/);
  });

  test('a failed ndl run leaves no partial --out; --skip-invalid counts and reports the skipped line', () => {
    const traces = at('traces.jsonl');
    const ok = ndbg(['trace', '--input', 'programs.jsonl', '--out', traces, '--quiet']);
    expect(ok.code).toBe(0);
    const record = fs.readFileSync(traces, 'utf8').trim();
    fs.writeFileSync(at('traces-mixed.jsonl'), `${record}\n{"broken": \n${record.replace('"p1"', '"p9"')}\n`);
    const failed = ndbg(['ndl', '--traces', 'traces-mixed.jsonl', '--out', 'docs-mixed.jsonl', '--quiet']);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toMatch(/traces-mixed\.jsonl:2: invalid JSON .*--skip-invalid/);
    expect(fs.readdirSync(tmp).filter((f) => f.includes('docs-mixed'))).toEqual([]);

    const skipped = ndbg(['ndl', '--traces', 'traces-mixed.jsonl', '--out', 'docs-mixed.jsonl', '--quiet', '--skip-invalid']);
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toMatch(/skipped 1 malformed input line \(--skip-invalid\); first: .*traces-mixed\.jsonl:2: invalid JSON/);
    expect(JSON.parse(skipped.stdout).programs).toBe(2);
  });

  test('trace --skip-invalid traces the good lines and counts the bad one', () => {
    const r = ndbg(['trace', '--input', 'broken.jsonl', '--out', 'traces-skip.jsonl', '--quiet', '--skip-invalid']);
    expect(r.code).toBe(0);
    expect(fs.readFileSync(at('traces-skip.jsonl'), 'utf8').trim().split('\n')).toHaveLength(2);
    expect(r.stderr).toMatch(/skipped 1 malformed input line/);
  });
});

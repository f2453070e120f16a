import * as fs from 'fs';
import * as path from 'path';
import yargs from 'yargs';
import { oracleCommand } from '../../src/cli/commands/oracle';
import { buildForwardTree } from '../../src/debugger';
import { explore, parseActions } from '../../src/debugger/explore';
import { UserError } from '../../src/util/errors';
import { fixtureTrace } from './helpers';
import { tempDir } from '../helpers/tmp';

async function runCli(args: string[]): Promise<string> {
  let out = '';
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += chunk.toString();
    return true;
  });
  try {
    await yargs(args).command(oracleCommand).strict().fail(false).exitProcess(false).parseAsync();
  } finally {
    spy.mockRestore();
  }
  return out;
}

describe('parseActions', () => {
  test('names, pdb letters, and breakpoint targets kept verbatim, commas included', () => {
    expect(parseActions('step_into,n,r,c,breakpoint:    return a, b,s,b:x = 1')).toEqual([
      { kind: 'step_into' },
      { kind: 'step_over' },
      { kind: 'step_return' },
      { kind: 'continue' },
      { kind: 'breakpoint', target: '    return a, b' },
      { kind: 'step_into' },
      { kind: 'breakpoint', target: 'x = 1' },
    ]);
    expect(() => parseActions('step_into,jump')).toThrow(UserError);
  });
});

describe('ndbg oracle', () => {
  const dir = tempDir('oracle');
  const file = path.join(dir, 'traces.jsonl');
  fs.writeFileSync(file, [fixtureTrace('count'), fixtureTrace('uncaught')].map((t) => JSON.stringify(t)).join('\n') + '\n');

  test('--json prints one entry per action, with an exit entry', async () => {
    const out = await runCli(['oracle', '--trace', file, '--id', 'count', '--json', '--actions', 'step_into,s,breakpoint:    return n,step_return,step_return,step_return']);
    const entries = JSON.parse(out);
    expect(entries).toHaveLength(6);
    expect(entries[0]).toMatchObject({ event: 'line', line: 8, depth: 0, src: '    return f("berry", "r")', locals: {} });
    expect(entries[1]).toMatchObject({ event: 'call', line: 1, depth: 1, src: 'def f(s, t):', locals: { s: "'berry'", t: "'r'" } });
    expect(entries[2]).toMatchObject({ event: 'line', line: 5, depth: 1, src: '    return n', locals: { s: "'berry'", t: "'r'", n: '2', c: "'y'" } });
    expect(entries[3]).toMatchObject({ event: 'return', depth: 1, value: '2' });
    expect(entries[4]).toMatchObject({ event: 'return', depth: 0, value: '2' });
    expect(entries[5]).toEqual({ event: 'exit', kind: 'normal' });
    for (const e of entries.slice(0, 5)) expect(Object.keys(e)).toEqual(expect.arrayContaining(['event', 'line', 'depth', 'src', 'locals']));
    // step_over from main's line skips f entirely: a breakpoint inside f is then never hit.
    const out2 = await runCli(['oracle', '--trace', file, '--id', 'count', '--json', '--actions', 's,n,b:    return n']);
    expect(JSON.parse(out2).slice(1)).toEqual([
      { node: 17, event: 'return', line: 8, depth: 0, src: '    return f("berry", "r")', locals: {}, value: '2' },
      { event: 'exit', kind: 'normal' },
    ]);
  });

  test('the readable form shows each state like pdb', async () => {
    const out = await runCli(['oracle', '--trace', file, '--id', 'uncaught', '--actions', 's,s,b:    return d[k],r']);
    expect(out).toContain('(start) #0 call at line 13, depth 0');
    expect(out).toContain('(breakpoint "    return d[k]") #');
    expect(out).toContain('value: 1');
  });

  test('inverse walk and errors', async () => {
    const out = await runCli(['oracle', '--trace', file, '--id', 'count', '--inverse', '--json', '--actions', 'inv_step_call,inv_step_call']);
    expect(JSON.parse(out)).toEqual([
      { node: 14, event: 'inv_call', line: 1, depth: 1, src: 'def f(s, t):', locals: { s: "'berry'", t: "'r'" }, value: null },
      { event: 'exit', kind: 'inv_exit_entry' },
    ]);
    await expect(runCli(['oracle', '--trace', file, '--id', 'nope', '--actions', 's'])).rejects.toThrow(/no record with id "nope"/);
    await expect(runCli(['oracle', '--trace', file, '--id', 'count', '--actions', 'inv_step_into'])).rejects.toThrow(/not a forward action/);
    await expect(runCli(['oracle', '--trace', file, '--id', 'count', '--actions', 'c,s'])).rejects.toThrow(/after the run already exited/);
    fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"id": "x"\n');
    await expect(runCli(['oracle', '--trace', path.join(dir, 'bad.jsonl'), '--actions', 's'])).rejects.toThrow(/bad.jsonl:1: invalid JSON/);
  });

  test('explore from an empty tree starts at EXIT', () => {
    const tree = buildForwardTree({ ...fixtureTrace('count'), events: [], status: 'error' });
    expect(explore(tree, []).start).toEqual({ event: 'exit', kind: 'error' });
  });
});

import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import { COUNT, step, top } from './helpers';

const BIN = path.resolve(__dirname, '..', '..', 'bin', 'ndbg.js');

describe('ndbg dap (the command)', () => {
  test('over stdio, as an editor starts it: a session on examples/count.py', async () => {
    // DebugClient starts `node FILE` with no arguments: this file runs `ndbg dap`.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-dap-cli-'));
    const launcher = path.join(dir, 'ndbg-dap.js');
    fs.writeFileSync(launcher, `process.argv.push('dap');\nrequire(${JSON.stringify(BIN)});\n`);
    const dc = new DebugClient('node', launcher, 'ndbg');
    dc.defaultTimeout = 60000;
    await dc.start();
    try {
      await dc.initializeRequest({ adapterID: 'ndbg', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
      const stopped = dc.waitForEvent('stopped');
      const launched = dc.launchRequest({ program: COUNT, call: "count('berry', 'r')" } as never);
      await dc.waitForEvent('initialized');
      await dc.configurationDoneRequest();
      await launched;
      expect((await stopped).body.reason).toBe('entry');
      await step(dc, () => dc.stepInRequest({ threadId: 1 }));
      expect(await top(dc)).toMatchObject({ name: 'count', line: 2, locals: { s: "'berry'", t: "'r'" } });
    } finally {
      await dc.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a bad --port is one line naming the flag, exit 2', () => {
    const r = spawnSync('node', [BIN, 'dap', '--port', '70000'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim()).toBe('ndbg: --port must be an integer in 0..65535, got 70000');
  });
});

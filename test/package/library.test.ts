import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/**
 * ndbg as a library, the way a user gets it: `npm pack` the repository (dist/ and its type
 * declarations are built by test/global-setup.ts, so the pack skips `prepare`), unpack the
 * tarball as node_modules/ndbg of a fresh project, then `require('ndbg')` from there and
 * type-check a TypeScript file against the packed declarations. Dependencies resolve from this
 * repository's node_modules (NODE_PATH), as an installed package's would from its own.
 */
const root = path.resolve(__dirname, '..', '..');
let app: string;
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-pack-'));
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [{ filename }] = JSON.parse(out) as Array<{ filename: string }>;
  app = path.join(tmp, 'app');
  fs.mkdirSync(path.join(app, 'node_modules'), { recursive: true });
  execFileSync('tar', ['-xzf', path.join(tmp, path.basename(filename)), '-C', path.join(app, 'node_modules')]);
  fs.renameSync(path.join(app, 'node_modules', 'package'), path.join(app, 'node_modules', 'ndbg'));
}, 120_000);
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

it('require("ndbg") from the packed tarball exposes every stage and works', () => {
  const script = `
    const ndbg = require('ndbg');
    const out = { stages: Object.keys(ndbg) };
    const byte = new ndbg.tokenizer.ByteTokenizer();
    out.byteRoundTrip = byte.decode(byte.encode('<|frame_sep|>x = 1')) === '<|frame_sep|>x = 1';
    out.specialTokens = ndbg.ndl.SPECIAL_TOKENS.length;
    out.actions = [...ndbg.oracle.FORWARD_ACTIONS, ...ndbg.oracle.INVERSE_ACTIONS].length;
    out.params = ndbg.model.modelStats(ndbg.model.resolveModelConfig({ vocab_size: 64, d_model: 16, n_layers: 1, n_heads: 2, d_ff: 32, max_seq_len: 8 }), 8).params;
    out.functions = ['programs.generateCorpus', 'trace.traceBatch', 'oracle.buildInverseTree', 'ndl.sampleDocuments',
      'tokenizer.loadTextTokenizer', 'data.buildDataset', 'data.MixtureLoader', 'model.LlamaModel', 'train.trainFromConfig',
      'evaluation.evaluateNextState', 'scaling.runSweep', 'scaling.fitLaw', 'dap.serveStdio'].filter((k) => { const [s, f] = k.split('.'); return typeof ndbg[s][f] !== 'function'; });
    ndbg.tokenizer.Tokenizer.load().then((tok) => {
      out.shippedTokenizer = tok.decode(tok.encode('def f(x):\\n    return x')) === 'def f(x):\\n    return x';
      out.resolvedFrom = require.resolve('ndbg');
      process.stdout.write(JSON.stringify(out));
      return tok.close();
    });`;
  const env = { ...process.env, NODE_PATH: path.join(root, 'node_modules') };
  const r = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: app, env, encoding: 'utf8' }));
  expect(r.stages).toEqual(['programs', 'trace', 'oracle', 'ndl', 'tokenizer', 'data', 'backend', 'model', 'train', 'evaluation', 'scaling', 'dap']); // pipeline order
  expect(r.resolvedFrom).toBe(path.join(app, 'node_modules', 'ndbg', 'dist', 'index.js'));
  expect(r.functions).toEqual([]);
  expect(r.byteRoundTrip).toBe(true);
  expect(r.shippedTokenizer).toBe(true); // the tokenizer model ships in the tarball
  expect(r.specialTokens).toBe(30);
  expect(r.actions).toBe(8);
  expect(r.params).toBeGreaterThan(0);
});

it('the packed type declarations type-check a user program (and are not `any`)', () => {
  fs.writeFileSync(
    path.join(app, 'check.ts'),
    `import * as ndbg from 'ndbg';
     const batch: ndbg.data.TokenBatch = { batchSize: 1, seqLen: 2, ids: new Int32Array(3), lossMask: new Uint8Array(3) };
     const n: number = ndbg.data.targetCount(batch);
     const d: ndbg.oracle.Direction = 'inverse';
     // @ts-expect-error a Direction is 'forward' or 'inverse' only
     const bad: ndbg.oracle.Direction = 'sideways';
     // @ts-expect-error trainFromConfig needs its options
     void ndbg.train.trainFromConfig();
     export const used = [n, d, bad];
    `,
  );
  fs.writeFileSync(
    path.join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true, noEmit: true, skipLibCheck: true, module: 'commonjs', moduleResolution: 'node', target: 'ES2022',
        types: [], baseUrl: '.', paths: { '*': [path.join(root, 'node_modules', '*'), path.join(root, 'node_modules', '@types', '*')] },
      },
      files: ['check.ts'],
    }),
  );
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  let output = '';
  try {
    execFileSync(process.execPath, [tsc, '-p', app], { cwd: app, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    output = String((e as { stdout?: string }).stdout);
  }
  expect(output).toBe('');
  expect(fs.existsSync(path.join(app, 'node_modules', 'ndbg', 'dist', 'index.d.ts'))).toBe(true);
}, 120_000);

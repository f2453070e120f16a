import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { packageRoot } from '../util/paths';
import { NODE_PACKAGES, NativeChoice, nativePaths } from './backend';
import { buildFusedOps } from './fused_build';
import { cacheRoot } from '../util/cache_dir';
import { findTfLibrary, TfLibrary } from './tf_library';

/**
 * `ndbg backend install [--gpu] [--from PATH]`: builds tfjs-node(-gpu)'s addon against a
 * TensorFlow C library found by ./tf_library.ts, instead of the libtensorflow 2.9.1 download
 * that the package's own install script attempts (it needs internet, and 2.9.1 is built for
 * CUDA 11.2, which predates Hopper GPUs).
 *
 *   1. check the tools (g++, make, python3, node headers): each missing one is one message
 *   2. find the library (tf_library.ts) and keep it under the cache (~/.cache/ndbg)
 *   3. install the npm package at the tfjs-core version ndbg uses, without its install script
 *   4. link the library and headers into the package's deps/
 *   5. build the addon from source (node-pre-gyp → node-gyp)
 *   6. verify in a fresh process: TF version, a matmul against JS, the backend `auto` picks
 *   7. build the fused kernels (native/ndbg_ops.cc, ./fused_build.ts) and check one runs; when
 *      they cannot be built that is one line, and training runs the unfused ops
 *
 * Idempotent: a step whose result is already there (same library, same addon) is skipped.
 */
export interface InstallOptions {
  gpu: boolean;
  from?: string;
  /** Pin the TensorFlow version pip downloads (and that an importable TensorFlow must have). */
  tfVersion?: string;
  /** Rebuild even when the addon was built against this library. */
  force?: boolean;
  log: (line: string) => void;
}

export interface InstallResult {
  package: string;
  library: TfLibrary;
  tfVersion: string;
  matmulMaxDiff: number;
  autoPicks: string;
  built: boolean;
  /** Why the fused ops are not available (training then runs unfused); undefined when they are. */
  fusedProblem?: string;
}

/** The tfjs-node release matching the tfjs-core in ndbg's node_modules (one tfjs-core in the process). */
function tfjsVersion(): string {
  const core = JSON.parse(fs.readFileSync(require.resolve('@tensorflow/tfjs-core/package.json'), 'utf8')) as { version: string };
  return core.version;
}

function have(cmd: string, args: string[] = ['--version']): boolean {
  return spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;
}

/** node-gyp from npm's own copy (beside node, or in the global npm): ndbg does not depend on it. */
function nodeGyp(): string | undefined {
  const prefix = path.dirname(path.dirname(process.execPath));
  const candidates = [path.join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js')];
  try {
    candidates.unshift(path.join(path.dirname(require.resolve('node-gyp/package.json')), 'bin', 'node-gyp.js'));
  } catch {
    // not installed as a package; npm's copy is the usual one
  }
  if (process.env.npm_config_node_gyp) candidates.unshift(process.env.npm_config_node_gyp);
  return candidates.find((c) => fs.existsSync(c));
}

/** The node headers directory to pass as nodedir, when the running node's are installed locally. */
function nodeDir(): string | undefined {
  const prefix = path.dirname(path.dirname(process.execPath));
  if (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h'))) return prefix;
  if (process.env.npm_config_nodedir && fs.existsSync(path.join(process.env.npm_config_nodedir, 'include', 'node', 'node_api.h'))) return process.env.npm_config_nodedir;
  return undefined;
}

const WASM_STILL = 'ndbg still trains on wasm without it';

function preflight(): { gyp: string; nodedir?: string } {
  if (!have('g++')) throw new UserError(`g++ not found: the addon is C++ (apt-get install -y g++ make); ${WASM_STILL}`);
  if (!have('make')) throw new UserError(`make not found (apt-get install -y make); ${WASM_STILL}`);
  if (!have('python3')) throw new UserError(`python3 not found: node-gyp needs it (apt-get install -y python3); ${WASM_STILL}`);
  const gyp = nodeGyp();
  if (!gyp) throw new UserError(`node-gyp not found (it ships with npm; npm install -g node-gyp); ${WASM_STILL}`);
  const nodedir = nodeDir();
  const gypCache = path.join(process.env.HOME ?? '', '.cache', 'node-gyp', process.versions.node, 'include', 'node', 'node_api.h');
  if (!nodedir && !fs.existsSync(gypCache)) {
    // Without local headers node-gyp downloads them, which fails offline; say so up front.
    if (!process.env.NDBG_ALLOW_HEADER_DOWNLOAD) {
      throw new UserError(
        `node ${process.version} headers not found (${path.join(path.dirname(path.dirname(process.execPath)), 'include/node')}); install them (e.g. apt-get install -y libnode-dev, or the nodejs package from nodejs.org) or set NDBG_ALLOW_HEADER_DOWNLOAD=1 to let node-gyp fetch them; ${WASM_STILL}`,
      );
    }
  }
  return { gyp, nodedir };
}

/** Installs the npm package (no install script) unless the right version is already there. */
function ensurePackage(choice: NativeChoice, log: (l: string) => void): string {
  const name = NODE_PACKAGES[choice];
  const want = tfjsVersion();
  const p = nativePaths(choice);
  if (p && fs.existsSync(path.join(p.dir, 'binding.gyp'))) {
    const pkg = JSON.parse(fs.readFileSync(path.join(p.dir, 'package.json'), 'utf8')) as { version: string };
    if (pkg.version === want) {
      log(`package: ${name}@${pkg.version} (already installed)`);
      return p.dir;
    }
  }
  log(`package: npm install --no-save --ignore-scripts ${name}@${want}`);
  const r = spawnSync('npm', ['install', '--no-save', '--ignore-scripts', '--no-audit', '--no-fund', `${name}@${want}`], { cwd: packageRoot(), encoding: 'utf8' });
  const after = nativePaths(choice);
  if (r.status !== 0 || !after) throw new UserError(`npm install ${name}@${want} failed: ${(r.stderr || '').trim().split('\n').pop()}`);
  return after.dir;
}

/**
 * One tfjs-core in the process: a package that resolves its own nested copy would register a
 * second platform ("Platform node has already been set") and second kernel/gradient registries'
 * worth of side effects on the shared engine. A nested copy of the same version is removed;
 * another version is an error.
 */
function ensureOneTfjsCore(dir: string, log: (l: string) => void): void {
  const ours = fs.realpathSync(require.resolve('@tensorflow/tfjs-core/package.json'));
  for (const from of [dir, path.dirname(require.resolve('@tensorflow/tfjs/package.json', { paths: [dir] }))]) {
    const theirs = fs.realpathSync(require.resolve('@tensorflow/tfjs-core/package.json', { paths: [from] }));
    if (theirs === ours) continue;
    const v = (JSON.parse(fs.readFileSync(theirs, 'utf8')) as { version: string }).version;
    if (v !== tfjsVersion()) throw new UserError(`${theirs}: tfjs-core ${v} beside ndbg's ${tfjsVersion()}; reinstall with \`ndbg backend install --force\` after \`npm install\``);
    fs.rmSync(path.dirname(theirs), { recursive: true, force: true });
    log(`package: removed a nested tfjs-core ${v} (${path.dirname(theirs)}); ndbg's copy serves both`);
  }
}

/** Points deps/lib and deps/include at the library (symlinks; the addon's RUNPATH is $ORIGIN/../../deps/lib). */
function linkDeps(dir: string, lib: TfLibrary): boolean {
  const deps = path.join(dir, 'deps');
  const libDir = path.join(deps, 'lib');
  const framework = path.join(lib.libDir, 'libtensorflow_framework.so.2');
  const soname = path.basename(lib.mainLib); // libtensorflow_cc.so.2 (wheel) or libtensorflow.so.2 (tarball)
  const links: Array<[string, string]> = [
    [path.join(libDir, 'libtensorflow.so'), lib.mainLib],
    [path.join(libDir, 'libtensorflow.so.2'), lib.mainLib],
    [path.join(libDir, soname), lib.mainLib],
    [path.join(libDir, 'libtensorflow_framework.so'), framework],
    [path.join(libDir, 'libtensorflow_framework.so.2'), framework],
    [path.join(deps, 'include'), lib.includeDir],
  ];
  // A GPU wheel finds its CUDA 12 pip libraries through $ORIGIN/../nvidia/*/lib RUNPATHs; with
  // the libraries linked into deps/lib, $ORIGIN is deps/lib, so deps/nvidia must lead there.
  if (lib.nvidiaDir) links.push([path.join(deps, 'nvidia'), lib.nvidiaDir]);
  const same = links.every(([at, to]) => {
    try {
      return fs.readlinkSync(at) === to;
    } catch {
      return false;
    }
  });
  if (same) return false;
  // deps/ may hold the 2.9.1 download of the package's own script: replace it.
  fs.rmSync(deps, { recursive: true, force: true });
  fs.mkdirSync(libDir, { recursive: true });
  for (const [at, to] of links) fs.symlinkSync(to, at);
  return true;
}

interface BuildStamp {
  mainLib: string;
  version: string;
  node: string;
}

function build(dir: string, lib: TfLibrary, tools: { gyp: string; nodedir?: string }, force: boolean, log: (l: string) => void): boolean {
  const binding = path.join(dir, 'lib', 'napi-v8', 'tfjs_binding.node');
  const stampFile = path.join(dir, 'lib', 'ndbg-build.json');
  const stamp: BuildStamp = { mainLib: lib.mainLib, version: lib.version, node: process.version };
  if (!force && fs.existsSync(binding) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === JSON.stringify(stamp)) {
    log(`addon: ${binding} (already built against this library)`);
    return false;
  }
  const preGyp = path.join(path.dirname(require.resolve('@mapbox/node-pre-gyp/package.json', { paths: [dir] })), 'bin', 'node-pre-gyp');
  const logFile = path.join(cacheRoot(), `build-${path.basename(dir)}.log`);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  log(`addon: building from source with node-gyp (about a minute; log: ${logFile})`);
  const env: NodeJS.ProcessEnv = { ...process.env, npm_config_node_gyp: tools.gyp };
  if (tools.nodedir) env.npm_config_nodedir = tools.nodedir;
  // Keep the compiler to one job: `make -j` here would compete with whatever else the machine runs.
  env.JOBS = env.JOBS ?? '1';
  const r = spawnSync(process.execPath, [preGyp, 'install', '--build-from-source'], { cwd: dir, env, encoding: 'utf8' });
  fs.writeFileSync(logFile, `${r.stdout ?? ''}\n${r.stderr ?? ''}`);
  if (r.status !== 0 || !fs.existsSync(binding)) {
    const lines = `${r.stdout ?? ''}\n${r.stderr ?? ''}`.split('\n');
    const why = lines.find((l) => /error:|fatal error|No such file|not found/i.test(l)) ?? lines.filter((l) => l.trim()).pop() ?? 'unknown error';
    throw new UserError(`building the ${path.basename(dir)} addon failed: ${why.trim()} (full log: ${logFile}); ${WASM_STILL}`);
  }
  fs.writeFileSync(stampFile, JSON.stringify(stamp));
  return true;
}

/** Runs a script in a fresh node process (an addon cannot be unloaded) and parses its JSON line. */
function child<T>(script: string): T & { error?: string } {
  const r = spawnSync(process.execPath, ['-e', script], { cwd: packageRoot(), encoding: 'utf8', env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } });
  try {
    return JSON.parse(r.stdout) as T & { error?: string };
  } catch {
    throw new UserError(`the built addon does not load: ${(r.stderr || '').trim().split('\n').filter((l) => l.trim()).pop() ?? `exit ${r.status}`}`);
  }
}

/**
 * Verification in fresh processes: the package loaded directly (so a GPU build is checked on a
 * machine without a GPU too), TF_Version, a matmul against a JS loop; then, separately, the
 * backend ndbg's `auto` picks.
 */
function verify(choice: NativeChoice): { tfVersion: string; matmulMaxDiff: number; autoPicks: string; gpu: boolean } {
  const direct = child<{ tfVersion: string; maxDiff: number; gpu: boolean }>(`
const tf = require('@tensorflow/tfjs-core');
(async () => {
  require(${JSON.stringify(NODE_PACKAGES[choice])});
  if (!(await tf.setBackend('tensorflow'))) throw new Error('tf.setBackend("tensorflow") returned false');
  const m = 37, k = 53, n = 29;
  const a = Float32Array.from({ length: m * k }, (_, i) => Math.sin(i));
  const b = Float32Array.from({ length: k * n }, (_, i) => Math.cos(i * 0.7));
  const got = tf.matMul(tf.tensor2d(a, [m, k]), tf.tensor2d(b, [k, n])).dataSync();
  let maxDiff = 0;
  for (let i = 0; i < m; i++) for (let j = 0; j < n; j++) {
    let s = 0; for (let p = 0; p < k; p++) s += a[i * k + p] * b[p * n + j];
    maxDiff = Math.max(maxDiff, Math.abs(s - got[i * n + j]));
  }
  const be = tf.backend();
  process.stdout.write(JSON.stringify({ tfVersion: be.binding.TF_Version, maxDiff, gpu: !!be.isUsingGpuDevice }));
})().catch((e) => { process.stdout.write(JSON.stringify({ error: String((e && e.message) || e).split('\\n')[0] })); });
`);
  if (direct.error) throw new UserError(`the built addon does not run: ${direct.error}`);
  if (!(typeof direct.maxDiff === 'number' && direct.maxDiff < 1e-3)) throw new UserError(`the built addon computes a wrong matmul (max |Δ| ${direct.maxDiff} against JS)`);
  const auto = child<{ auto: string }>(`
require(${JSON.stringify(require.resolve('./backend'))}).initBackend('auto', () => undefined)
  .then((b) => process.stdout.write(JSON.stringify({ auto: b.choice })))
  .catch((e) => process.stdout.write(JSON.stringify({ error: String((e && e.message) || e) })));
`);
  return { tfVersion: direct.tfVersion ?? '?', matmulMaxDiff: direct.maxDiff, autoPicks: auto.auto ?? `none (${auto.error})`, gpu: direct.gpu };
}

export function installBackend(o: InstallOptions): InstallResult {
  const choice: NativeChoice = o.gpu ? 'tensorflow-gpu' : 'tensorflow';
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new UserError(`ndbg backend install supports Linux x86-64 (this is ${process.platform}-${process.arch}); ${WASM_STILL}`);
  }
  const tools = preflight();
  const library = findTfLibrary({ gpu: o.gpu, from: o.from, version: o.tfVersion, log: o.log });
  if (o.gpu && /tensorflow[_-]cpu|libtensorflow-cpu/.test(`${library.source} ${library.libDir}`)) {
    o.log(`note: ${library.source} is a CPU build of TensorFlow: the GPU addon builds and loads, but finds no GPU with it`);
  }
  const dir = ensurePackage(choice, o.log);
  ensureOneTfjsCore(dir, o.log);
  const relinked = linkDeps(dir, library);
  o.log(`deps: ${path.join(dir, 'deps')} → ${library.libDir}${relinked ? '' : ' (unchanged)'}`);
  const built = build(dir, library, tools, o.force || relinked, o.log);
  const v = verify(choice);
  o.log(`verified: TensorFlow ${v.tfVersion}, matmul max |Δ| vs JS ${v.matmulMaxDiff.toExponential(1)}, --backend auto picks ${v.autoPicks}${o.gpu ? (v.gpu ? ' (GPU in use)' : ' (no GPU device here: tensorflow-gpu runs only where CUDA 12 and a GPU are)') : ''}`);
  const fusedProblem = fused(choice, library, v.tfVersion, Boolean(o.force), o.log);
  if (fusedProblem) o.log(`fused ops: ${fusedProblem}; training runs the unfused TensorFlow ops (same results, slower)`);
  return { package: NODE_PACKAGES[choice], library, tfVersion: v.tfVersion, matmulMaxDiff: v.matmulMaxDiff, autoPicks: v.autoPicks, built, fusedProblem };
}

/** Builds the fused kernels and runs one in a fresh process against the tfjs computation; a problem, or undefined. */
function fused(choice: NativeChoice, library: TfLibrary, tfVersion: string, force: boolean, log: (l: string) => void): string | undefined {
  if (!have('g++')) return 'g++ not found (apt-get install -y g++)';
  const b = buildFusedOps(library, tfVersion, force, log);
  if (b.problem) return b.problem;
  const r = child<{ maxDiff: number }>(`
const tf = require('@tensorflow/tfjs-core');
require(${JSON.stringify(require.resolve('./backend'))}).initBackend(${JSON.stringify(choice)}, () => undefined).then(() => {
  const ops = require(${JSON.stringify(require.resolve('./fused_ops'))}).loadFusedOps();
  if (!ops) throw new Error('the library did not load');
  const g = tf.tensor2d([[-2, -0.5, 0, 1.5]]), u = tf.tensor2d([[1, 2, 3, 4]]);
  const d = tf.max(tf.abs(tf.sub(ops.swiglu(g, u), tf.mul(tf.mul(g, tf.sigmoid(g)), u)))).dataSync()[0];
  process.stdout.write(JSON.stringify({ maxDiff: d }));
}).catch((e) => process.stdout.write(JSON.stringify({ error: String((e && e.message) || e).split('\\n')[0] })));
`);
  if (r.error) return `the built library does not run: ${r.error}`;
  if (!(r.maxDiff < 1e-5)) return `the built library computes a wrong SwiGLU (max |Δ| ${r.maxDiff})`;
  log(`fused ops: ${b.path} (${b.built ? 'built' : 'unchanged'}; SwiGLU max |Δ| vs tfjs ${r.maxDiff.toExponential(1)})`);
  return undefined;
}

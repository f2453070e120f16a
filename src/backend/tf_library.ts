import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { cacheRoot } from '../util/cache_dir';
import { UserError } from '../util/errors';

/**
 * Finding a TensorFlow C library for the node backend and keeping it in a stable place.
 *
 * The TensorFlow pip wheel ships the C API that tfjs-node's addon links against:
 * `tensorflow/libtensorflow_cc.so.2` exports the TF_* / TFE_* symbols, `libtensorflow_framework.so.2`
 * sits beside it and the headers are under `tensorflow/include/`. A libtensorflow tarball has the
 * same API as `lib/libtensorflow.so.2` + `include/`. Either works; the wheel is what pip can fetch
 * (also from a local index, on an offline machine) and is built for CUDA 12 in its GPU variant.
 */
export interface TfLibrary {
  /** Where it came from, for messages: a file, a directory, `python3 (import tensorflow)`. */
  source: string;
  /** The version from the wheel/tarball name or the installed package's metadata ('?' when unknown). */
  version: string;
  /** Directory holding the C library (libtensorflow_cc.so.2 or libtensorflow.so.2) and the framework library. */
  libDir: string;
  /** The library file that exports the C API. */
  mainLib: string;
  /** Directory with tensorflow/c/c_api.h. */
  includeDir: string;
  /** A site-packages `nvidia/` folder beside a GPU wheel (CUDA 12 pip libraries), when there is one. */
  nvidiaDir?: string;
}

/** Headers neither the addon nor the fused ops need (third-party sources: ~140 MB of the wheel's 250). */
const SKIP_INCLUDE = ['tensorflow/include/external/'];
/** Eigen's headers (~10 MB): the fused kernels (native/ndbg_ops.cc) need them, the addon does not. */
const EIGEN_INCLUDE = ['tensorflow/include/Eigen/', 'tensorflow/include/unsupported/'];

/** A library layout inside `dir`, or undefined: an unpacked wheel's `tensorflow/`, or an unpacked tarball. */
export function libraryIn(dir: string, source: string, version: string): TfLibrary | undefined {
  const cc = path.join(dir, 'libtensorflow_cc.so.2');
  if (fs.existsSync(cc) && fs.existsSync(path.join(dir, 'libtensorflow_framework.so.2'))) {
    const nvidia = path.join(dir, '..', 'nvidia');
    return { source, version, libDir: dir, mainLib: cc, includeDir: path.join(dir, 'include'), nvidiaDir: fs.existsSync(nvidia) ? path.resolve(nvidia) : undefined };
  }
  const tarLib = path.join(dir, 'lib', 'libtensorflow.so.2');
  if (fs.existsSync(tarLib)) return { source, version, libDir: path.join(dir, 'lib'), mainLib: tarLib, includeDir: path.join(dir, 'include') };
  return undefined;
}

/** `tensorflow_cpu-2.21.0-cp311-…whl` → {name: 'tensorflow_cpu', version: '2.21.0'}; tarballs → 'libtensorflow-cpu-…-2.9.1'. */
export function parseArchiveName(file: string): { name: string; version: string } {
  const base = path.basename(file);
  const wheel = /^([A-Za-z0-9_.]+)-(\d[^-]*)-/.exec(base);
  if (base.endsWith('.whl') && wheel) return { name: wheel[1].toLowerCase(), version: wheel[2] };
  const tar = /^(libtensorflow-[a-z]+)-[a-z0-9_-]+?-(\d+\.\d+\.\d+)\.tar\.gz$/.exec(base);
  if (tar) return { name: tar[1], version: tar[2] };
  return { name: base.replace(/\.(whl|tar\.gz|tgz)$/, ''), version: '?' };
}

function python(): string {
  for (const p of ['python3', 'python']) {
    const r = spawnSync(p, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return p;
  }
  throw new UserError('python3 not found: it is needed to unpack a TensorFlow wheel and to build the addon (apt-get install -y python3); ndbg still trains on wasm without it');
}

/** Extracts the C library and headers from a wheel into the cache (once; a complete copy is reused). */
function extractWheel(wheel: string, log: (l: string) => void): TfLibrary {
  const { name, version } = parseArchiveName(wheel);
  const target = path.join(cacheRoot(), 'libtensorflow', `${name}-${version}`);
  const lib = libraryIn(path.join(target, 'tensorflow'), wheel, version);
  if (lib && fs.existsSync(path.join(target, 'COMPLETE'))) {
    log(`library: ${target} (already extracted from ${path.basename(wheel)})`);
    return lib;
  }
  log(`library: extracting ${path.basename(wheel)} (C library + headers, ~1 GB) to ${target}`);
  const tmp = `${target}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  // Python's zipfile, not `unzip` (not installed everywhere; python3 is needed for node-gyp anyway).
  const script = `
import sys, zipfile
wheel, out, skip = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
keep = lambda n: n in ('tensorflow/libtensorflow_cc.so.2', 'tensorflow/libtensorflow_framework.so.2') or (
    n.startswith('tensorflow/include/') and not any(n.startswith(s) for s in skip))
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if keep(n)]
    if 'tensorflow/libtensorflow_cc.so.2' not in names:
        sys.exit('this wheel has no tensorflow/libtensorflow_cc.so.2 (not a TensorFlow >= 2.x Linux wheel?)')
    for n in names: z.extract(n, out)
`;
  const r = spawnSync(python(), ['-c', script, wheel, tmp, SKIP_INCLUDE.join(',')], { encoding: 'utf8' });
  if (r.status !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new UserError(`${wheel}: cannot extract the TensorFlow library: ${(r.stderr || '').trim().split('\n').pop()}`);
  }
  fs.writeFileSync(path.join(tmp, 'COMPLETE'), JSON.stringify({ from: wheel, version }) + '\n');
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(tmp, target);
  return libraryIn(path.join(target, 'tensorflow'), wheel, version) as TfLibrary;
}

function extractTarball(tarball: string, log: (l: string) => void): TfLibrary {
  const { name, version } = parseArchiveName(tarball);
  const target = path.join(cacheRoot(), 'libtensorflow', `${name}-${version}`);
  const done = libraryIn(target, tarball, version);
  if (done && fs.existsSync(path.join(target, 'COMPLETE'))) {
    log(`library: ${target} (already extracted from ${path.basename(tarball)})`);
    return done;
  }
  log(`library: extracting ${path.basename(tarball)} to ${target}`);
  const tmp = `${target}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true });
  const r = spawnSync('tar', ['-C', tmp, '-xzf', tarball], { encoding: 'utf8' });
  const lib = libraryIn(tmp, tarball, version);
  if (r.status !== 0 || !lib) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new UserError(`${tarball}: not a libtensorflow tarball (expected lib/libtensorflow.so.2 and include/)${r.stderr ? `: ${r.stderr.trim().split('\n').pop()}` : ''}`);
  }
  fs.writeFileSync(path.join(tmp, 'COMPLETE'), JSON.stringify({ from: tarball, version }) + '\n');
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(tmp, target);
  return libraryIn(target, tarball, version) as TfLibrary;
}

/** The version recorded in a site-packages `*.dist-info` beside a `tensorflow/` folder. */
function distInfoVersion(sitePackages: string): string {
  for (const e of fs.existsSync(sitePackages) ? fs.readdirSync(sitePackages) : []) {
    const m = /^(tensorflow|tensorflow_cpu|tensorflow_gpu|tf_nightly[a-z_]*)-(\d[^-]*)\.dist-info$/.exec(e);
    if (m) return m[2];
  }
  return '?';
}

/** A library from `--from PATH`: a wheel, a libtensorflow tarball, an unpacked wheel/tarball or a site-packages dir. */
function fromPath(p: string, log: (l: string) => void): TfLibrary {
  const abs = path.resolve(p);
  if (!fs.existsSync(abs)) throw new UserError(`--from ${p}: no such file or directory`);
  if (fs.statSync(abs).isFile()) {
    if (abs.endsWith('.whl')) return extractWheel(abs, log);
    if (abs.endsWith('.tar.gz') || abs.endsWith('.tgz')) return extractTarball(abs, log);
    throw new UserError(`--from ${p}: expected a .whl, a libtensorflow .tar.gz or a directory`);
  }
  const candidates: Array<[string, string]> = [
    [abs, distInfoVersion(path.dirname(abs))],
    [path.join(abs, 'tensorflow'), distInfoVersion(abs)],
  ];
  for (const [dir, version] of candidates) {
    const lib = libraryIn(dir, abs, version);
    if (lib) return lib;
  }
  throw new UserError(`--from ${p}: no TensorFlow C library there (looked for libtensorflow_cc.so.2, tensorflow/libtensorflow_cc.so.2, lib/libtensorflow.so.2)`);
}

/** The TensorFlow that python3 would import, found without importing it (that takes seconds). */
function importable(gpu: boolean): TfLibrary | undefined {
  const script = `
import importlib.util, importlib.metadata, os, sys
spec = importlib.util.find_spec('tensorflow')
if not spec or not spec.submodule_search_locations: sys.exit(1)
v = '?'
for dist in ('tensorflow', 'tensorflow-cpu', 'tensorflow-gpu', 'tf-nightly', 'tf-nightly-cpu'):
    try: v = importlib.metadata.version(dist); print(dist); break
    except importlib.metadata.PackageNotFoundError: pass
else: print('?')
print(v); print(list(spec.submodule_search_locations)[0])
`;
  let out: string;
  try {
    out = execFileSync(python(), ['-c', script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  const [dist, version, dir] = out.trim().split('\n');
  if (gpu && dist === 'tensorflow-cpu') return undefined;
  return libraryIn(dir, `python3 (import tensorflow: ${dist} ${version})`, version);
}

/**
 * Makes sure the library's include dir has Eigen (custom kernels include it). Libraries extracted
 * before the fused ops existed skipped it: it is added from the wheel they came from. Returns a
 * reason when it cannot be had (a libtensorflow tarball ships no Eigen headers).
 */
export function ensureKernelHeaders(lib: TfLibrary, log: (l: string) => void): string | undefined {
  if (fs.existsSync(path.join(lib.includeDir, 'Eigen', 'Core'))) return undefined;
  if (!lib.source.endsWith('.whl') || !fs.existsSync(lib.source)) {
    return `${lib.includeDir} has no Eigen headers (a pip wheel or site-packages TensorFlow has them; a libtensorflow tarball does not)`;
  }
  log(`fused ops: extracting Eigen's headers (~10 MB) from ${path.basename(lib.source)}`);
  const script = `
import sys, zipfile
wheel, out, prefixes = sys.argv[1], sys.argv[2], tuple(sys.argv[3].split(','))
with zipfile.ZipFile(wheel) as z:
    for n in z.namelist():
        if n.startswith(prefixes): z.extract(n, out)
`;
  // The wheel's names start with tensorflow/include/, and includeDir is <target>/tensorflow/include.
  const r = spawnSync(python(), ['-c', script, lib.source, path.dirname(path.dirname(lib.includeDir)), EIGEN_INCLUDE.join(',')], { encoding: 'utf8' });
  if (r.status !== 0 || !fs.existsSync(path.join(lib.includeDir, 'Eigen', 'Core'))) return `cannot extract Eigen's headers from ${lib.source}: ${(r.stderr || '').trim().split('\n').pop()}`;
  return undefined;
}

/** `python3 -m pip download --no-deps` of tensorflow-cpu (or tensorflow for --gpu) into the cache. */
function download(gpu: boolean, version: string | undefined, log: (l: string) => void): TfLibrary {
  const dist = gpu ? 'tensorflow' : 'tensorflow-cpu';
  const spec = version ? `${dist}==${version}` : dist;
  const dir = path.join(cacheRoot(), 'wheels');
  fs.mkdirSync(dir, { recursive: true });
  const py = python();
  log(`library: python3 -m pip download --no-deps ${spec} (about 270 MB for the CPU wheel, 600 MB for the GPU one) into ${dir}`);
  const r = spawnSync(py, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '-d', dir, spec], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) {
    const why = (r.stderr || '').trim().split('\n').filter((l) => /ERROR|No module named pip/.test(l)).pop() ?? (r.stderr || '').trim().split('\n').pop();
    throw new UserError(
      `no TensorFlow library found and \`${py} -m pip download ${spec}\` failed: ${why ?? 'unknown error'}. ` +
        'Copy a TensorFlow wheel here and pass --from FILE (see README, "Backends"); ndbg still trains on wasm',
    );
  }
  const prefix = dist.replace('-', '_');
  const wheels = fs.readdirSync(dir).filter((f) => f.startsWith(`${prefix}-`) && f.endsWith('.whl') && (!version || parseArchiveName(f).version === version));
  wheels.sort((a, b) => fs.statSync(path.join(dir, b)).mtimeMs - fs.statSync(path.join(dir, a)).mtimeMs);
  if (!wheels.length) throw new UserError(`pip reported success but no ${prefix}-*.whl is in ${dir}`);
  return extractWheel(path.join(dir, wheels[0]), log);
}

/**
 * The library to build against, in the issue's order: `--from`, the TensorFlow python3 imports,
 * a wheel already downloaded into the cache, else pip download.
 */
export function findTfLibrary(o: { gpu: boolean; from?: string; version?: string; log: (l: string) => void }): TfLibrary {
  if (o.from) return fromPath(o.from, o.log);
  const local = importable(o.gpu);
  if (local && (!o.version || local.version === o.version)) {
    o.log(`library: ${local.libDir} (${local.source})`);
    return local;
  }
  const dist = o.gpu ? 'tensorflow' : 'tensorflow_cpu';
  const cached = path.join(cacheRoot(), 'wheels');
  const have = fs.existsSync(cached)
    ? fs.readdirSync(cached).filter((f) => f.startsWith(`${dist}-`) && f.endsWith('.whl') && (!o.version || parseArchiveName(f).version === o.version))
    : [];
  if (have.length) return extractWheel(path.join(cached, have.sort().pop() as string), o.log);
  return download(o.gpu, o.version, o.log);
}

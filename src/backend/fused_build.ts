import { spawnSync } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';
import { packageRoot } from '../util/paths';
import { cacheRoot } from '../util/cache_dir';
import { ensureKernelHeaders, TfLibrary } from './tf_library';

/**
 * Building native/ndbg_ops.cc, the fused TensorFlow kernels (see there), against the TensorFlow
 * the addon uses, with the flags TensorFlow's own `tf.sysconfig` gives for custom ops:
 *   -std=c++17 -D_GLIBCXX_USE_CXX11_ABI=1 -DEIGEN_MAX_ALIGN_BYTES=64 -I<tf>/include
 *   -L<tf> -l:libtensorflow_framework.so.2
 * (checked against the 2.21 wheel: its framework library exports the __cxx11 ABI symbols).
 * The result lives in the cache under the TensorFlow version, with a stamp of the source's hash:
 * a library built from another source is never loaded (fused_ops.ts checks the same stamp).
 */
export const SOURCE = 'native/ndbg_ops.cc';

/** The source's hash, or undefined when the package was installed without native/. */
export function sourceHash(): string | undefined {
  const file = path.join(packageRoot(), SOURCE);
  if (!fs.existsSync(file)) return undefined;
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex').slice(0, 16);
}

/** Where the library for a TensorFlow version (TF_Version() of the loaded addon) is kept. */
export function fusedLibraryPath(tfVersion: string): { lib: string; stamp: string } {
  const dir = path.join(cacheRoot(), 'ops', `tf-${tfVersion}`);
  return { lib: path.join(dir, 'ndbg_ops.node'), stamp: path.join(dir, 'ndbg_ops.json') };
}

interface Stamp {
  source: string;
  framework: string;
}

/**
 * Compiles the library unless one from the same source and framework library is there.
 * Returns a reason instead of throwing: without it training still runs, unfused.
 */
export function buildFusedOps(lib: TfLibrary, tfVersion: string, force: boolean, log: (l: string) => void): { built: boolean; path?: string; problem?: string } {
  const { lib: out, stamp: stampFile } = fusedLibraryPath(tfVersion);
  const source = sourceHash();
  if (!source) return { built: false, problem: `${SOURCE} is not in this installation of ndbg` };
  const framework = fs.realpathSync(path.join(lib.libDir, 'libtensorflow_framework.so.2'));
  const stamp: Stamp = { source, framework };
  if (!force && fs.existsSync(out) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === JSON.stringify(stamp)) {
    log(`fused ops: ${out} (already built from this source)`);
    return { built: false, path: out };
  }
  const headers = ensureKernelHeaders(lib, log);
  if (headers) return { built: false, problem: headers };
  fs.mkdirSync(path.dirname(out), { recursive: true });
  const tmp = `${out}.tmp-${process.pid}`;
  const args = [
    '-std=c++17', '-shared', '-fPIC', '-O3',
    // This machine's vector units (the library is built where it runs). AVX512-FP16 is off:
    // Eigen's half-precision packet code in the 2.21 headers does not compile with g++ 12.
    '-march=native', '-mno-avx512fp16',
    // No contraction into FMAs: the fused results round like the unfused TensorFlow ops.
    '-ffp-contract=off',
    '-D_GLIBCXX_USE_CXX11_ABI=1', '-DEIGEN_MAX_ALIGN_BYTES=64', '-DNDEBUG', '-w',
    `-I${lib.includeDir}`, path.join(packageRoot(), SOURCE), '-o', tmp,
    `-L${lib.libDir}`, '-l:libtensorflow_framework.so.2', `-Wl,-rpath,${lib.libDir}`,
  ];
  log(`fused ops: compiling ${SOURCE} with g++ (~15 s)`);
  const r = spawnSync('g++', args, { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    fs.rmSync(tmp, { force: true });
    const why = r.error ? `g++ not runnable (${r.error.message})` : ((r.stderr || '').split('\n').find((l) => /error/.test(l)) ?? `g++ exit ${r.status}`).trim();
    return { built: false, problem: `cannot compile ${SOURCE}: ${why}` };
  }
  fs.renameSync(tmp, out);
  fs.writeFileSync(stampFile, JSON.stringify(stamp));
  return { built: true, path: out };
}

/** The reason a built library must not be loaded (missing, or built from another source); undefined when it can. */
export function fusedLibraryProblem(tfVersion: string): string | undefined {
  const { lib, stamp } = fusedLibraryPath(tfVersion);
  if (!fs.existsSync(lib) || !fs.existsSync(stamp)) return `not built for TensorFlow ${tfVersion} (run \`ndbg backend install\`)`;
  let s: Stamp;
  try {
    s = JSON.parse(fs.readFileSync(stamp, 'utf8')) as Stamp;
  } catch {
    return `${stamp} is unreadable (run \`ndbg backend install\`)`;
  }
  const source = sourceHash();
  if (!source) return `${SOURCE} is not in this installation of ndbg`;
  if (s.source !== source) return `built from another version of ${SOURCE} (run \`ndbg backend install\`)`;
  return undefined;
}

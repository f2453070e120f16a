import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { findTfLibrary, libraryIn, parseArchiveName } from '../../src/backend/tf_library';
import { UserError } from '../../src/util/errors';

/**
 * Finding a TensorFlow C library (`ndbg backend install --from`): the layouts it accepts and the
 * one-line errors for what it does not. The full install (pip, build, verify) runs in CI's
 * setup script and is exercised by test/backend/native_backend.test.ts through its result.
 */
let tmp: string;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-tflib-'));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function touch(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, '');
}

const log = () => undefined;

test('wheel and tarball names give the version', () => {
  expect(parseArchiveName('/x/tensorflow_cpu-2.21.0-cp311-cp311-manylinux_2_27_x86_64.whl')).toEqual({ name: 'tensorflow_cpu', version: '2.21.0' });
  expect(parseArchiveName('tensorflow-2.18.1-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl')).toEqual({ name: 'tensorflow', version: '2.18.1' });
  expect(parseArchiveName('libtensorflow-gpu-linux-x86_64-2.9.1.tar.gz')).toEqual({ name: 'libtensorflow-gpu', version: '2.9.1' });
});

test('an unpacked wheel, a site-packages dir and an unpacked tarball are found', () => {
  const site = path.join(tmp, 'site-packages');
  touch(path.join(site, 'tensorflow', 'libtensorflow_cc.so.2'));
  touch(path.join(site, 'tensorflow', 'libtensorflow_framework.so.2'));
  fs.mkdirSync(path.join(site, 'tensorflow_cpu-2.21.0.dist-info'));
  fs.mkdirSync(path.join(site, 'nvidia'));
  const fromSite = findTfLibrary({ gpu: false, from: site, log });
  expect(fromSite).toEqual(expect.objectContaining({ version: '2.21.0', mainLib: path.join(site, 'tensorflow', 'libtensorflow_cc.so.2'), includeDir: path.join(site, 'tensorflow', 'include') }));
  expect(fromSite.nvidiaDir).toBe(path.join(site, 'nvidia'));
  expect(findTfLibrary({ gpu: false, from: path.join(site, 'tensorflow'), log }).version).toBe('2.21.0');

  const tar = path.join(tmp, 'libtensorflow');
  touch(path.join(tar, 'lib', 'libtensorflow.so.2'));
  touch(path.join(tar, 'include', 'tensorflow', 'c', 'c_api.h'));
  expect(libraryIn(tar, tar, '2.9.1')).toEqual(expect.objectContaining({ mainLib: path.join(tar, 'lib', 'libtensorflow.so.2'), includeDir: path.join(tar, 'include') }));
});

test.each([
  ['a missing path', (d: string) => path.join(d, 'nope.whl'), /--from .*nope\.whl: no such file or directory/],
  ['a file of another kind', (d: string) => (touch(path.join(d, 'x.zip')), path.join(d, 'x.zip')), /expected a \.whl, a libtensorflow \.tar\.gz or a directory/],
  ['a directory without the library', (d: string) => (fs.mkdirSync(path.join(d, 'empty'), { recursive: true }), path.join(d, 'empty')), /no TensorFlow C library there/],
])('--from %s is one clear error', (_what, make, message) => {
  const from = make(tmp);
  let err: unknown;
  try {
    findTfLibrary({ gpu: false, from, log });
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(UserError);
  expect((err as Error).message).toMatch(message);
  expect((err as Error).message.split('\n')).toHaveLength(1);
});

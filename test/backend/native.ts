import { nativeUnavailableReason } from '../../src/backend/backend';

/**
 * The backends the model tests run on: cpu and wasm always, tensorflow when `ndbg backend
 * install` has built it here (CI does, in .ci/setup.d/10-native-backend.sh). Without it the
 * tensorflow cases are not silently green: they are left out with a printed reason.
 */
export type TestBackend = 'cpu' | 'wasm' | 'tensorflow';

export function nativeSkipReason(): string | undefined {
  return nativeUnavailableReason('tensorflow');
}

export function backendsUnderTest(base: TestBackend[] = ['cpu', 'wasm']): TestBackend[] {
  const why = nativeSkipReason();
  if (why) {
    // eslint-disable-next-line no-console
    console.log(`skipped: the tensorflow cases (${why})`);
    return base;
  }
  return [...base, 'tensorflow'];
}

/** Tests import the TypeScript sources directly; ts-jest compiles each file on its own
 * (isolatedModules) because whole-program type checking is `npm run typecheck`'s job. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  testTimeout: 120000,
  // Builds dist/ (only when src/ changed) for tests that spawn the real CLI; see the file.
  globalSetup: '<rootDir>/test/global-setup.ts',
};

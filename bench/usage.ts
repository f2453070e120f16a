/** A bad benchmark flag: the runner prints its message alone (no stack) and exits 2. */
export class BenchUsageError extends Error {}

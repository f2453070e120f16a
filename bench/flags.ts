/** A bad benchmark flag: the runner prints its message alone (no stack) and exits 2. */
export class BenchUsageError extends Error {}

/** The value of `--name=value` in args (everything after the first `=`), or undefined. */
export function flagValue(args: string[], name: string): string | undefined {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** `--name=N` as an integer ≥ min, or fallback when absent; anything else is a BenchUsageError. */
export function intFlag(args: string[], name: string, fallback: number, min = 1): number {
  const raw = flagValue(args, name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new BenchUsageError(`--${name}=${raw}: expected an integer ≥ ${min}`);
  return n;
}

/** `--name=value` where value is one of `choices`, or fallback when absent; anything else is a BenchUsageError. */
export function choiceFlag<T extends string>(args: string[], name: string, choices: readonly T[], fallback: T): T {
  const raw = flagValue(args, name);
  if (raw === undefined) return fallback;
  if (!(choices as readonly string[]).includes(raw)) throw new BenchUsageError(`--${name}=${raw}: expected ${choices.join(' or ')}`);
  return raw as T;
}

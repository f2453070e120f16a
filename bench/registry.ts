/**
 * The benchmarks `npm run bench` knows, by name. Each module's `run()` measures side by side
 * in one process run and returns a JSON-able result (ratios included), which run.ts writes
 * to bench/results/<name>.json. Add new benchmarks here.
 */
export type BenchFn = (args: string[]) => Promise<Record<string, unknown>>;

export const benchmarks: Record<string, () => Promise<BenchFn>> = {
  trace: async () => (await import('./trace')).run,
  data: async () => (await import('./data')).run,
  train: async () => (await import('./train')).run,
  model: async () => (await import('./model')).run,
  programs: async () => (await import('./programs')).run,
  oracle: async () => (await import('./oracle')).run,
  tokenizer: async () => (await import('./tokenizer')).run,
  learning: async () => (await import('./learning')).run,
  scale: async () => (await import('./scale')).run,
  'step-profile': async () => (await import('./step_profile')).run,
  kernels: async () => (await import('./kernels')).run,
  mine: async () => (await import('./mine')).run,
  optimizer: async () => (await import('./optimizer')).run,
  eval: async () => (await import('./eval')).run,
};

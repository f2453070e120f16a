import { benchmarks } from './registry';
import { writeBenchResult } from './results';
import { BenchUsageError } from './flags';

/** Benchmarks that run only when named: `learning` trains for hours, `eval` needs a trained quickstart run. */
const ONLY_WHEN_NAMED = new Set(['learning', 'eval']);

/** `npm run bench [-- NAME ...]`: runs the named benchmarks (default: all but ONLY_WHEN_NAMED) one after another. */
async function runBenchmarks(argv: string[]): Promise<void> {
  const names = argv.filter((a) => !a.startsWith('-'));
  const selected = names.length ? names : Object.keys(benchmarks).filter((n) => !ONLY_WHEN_NAMED.has(n));
  for (const name of selected) {
    const load = benchmarks[name];
    if (!load) {
      process.stderr.write(`unknown benchmark "${name}"; known: ${Object.keys(benchmarks).join(', ')}\n`);
      process.exit(2);
    }
    process.stderr.write(`== bench ${name}\n`);
    const run = await load();
    const result = await run(argv.filter((a) => a.startsWith('-')));
    const file = writeBenchResult(name, result);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\nwritten to ${file}\n`);
  }
}

runBenchmarks(process.argv.slice(2)).catch((e) => {
  if (e instanceof BenchUsageError) {
    process.stderr.write(`bench: ${e.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`${(e as Error).stack}\n`);
  process.exit(1);
});

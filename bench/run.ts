import { benchmarks } from './registry';
import { writeBenchResult } from './results';
import { BenchUsageError } from './flags';

/** `npm run bench [-- NAME ...]`: runs the named benchmarks (default: all but `learning`) one after another. */
async function runBenchmarks(argv: string[]): Promise<void> {
  const names = argv.filter((a) => !a.startsWith('-'));
  // `learning` trains for hours: it runs only when named.
  const selected = names.length ? names : Object.keys(benchmarks).filter((n) => n !== 'learning');
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

import type { Argv } from 'yargs';

/** The `--config FILE` and repeatable `--set FIELD=VALUE` pair that every configurable command takes. */
export function withConfigOptions<T>(y: Argv<T>) {
  return y
    .option('config', { type: 'string', describe: 'JSON config file' })
    .option('set', {
      type: 'string',
      array: true,
      default: [] as string[],
      describe: 'Override a config field, e.g. --set train.steps=100 (repeatable; value parsed as JSON)',
    });
}

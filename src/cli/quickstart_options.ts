/** The quickstart's knobs and defaults, and the progress lines every stage prints. */
import { assetPath } from '../util/paths';
import { formatDuration } from '../util/progress';

export interface QuickstartOptions {
  out: string;
  /** Training time budget. */
  minutes: number;
  /** Upper bound on training steps (the time budget usually ends training first). */
  steps: number;
  programs: number;
  docsPerProgram: number;
  evalPrograms: number;
  config: string;
  /**
   * Generator config: configs/programs-quickstart.json keeps programs (≤ 360 characters, about
   * 100 tokens of context) short enough that a document shows the program and its whole run,
   * up to the trajectory's end, within the quickstart model's 512-token context (docs/eval.md,
   * "Choosing the quickstart").
   */
  programsConfig: string;
  tokenizer: string;
  backend: string;
  seed: number;
  workers: number;
  codeBytes: number;
  force: boolean;
  /** Extra `--set` overrides for the training config. */
  set: string[];
}

export const QUICKSTART_DEFAULTS: Omit<QuickstartOptions, 'out'> = {
  minutes: 10,
  steps: 100000,
  // 12,000 rather than 3,000: at 10 minutes the model reads about half of their documents, and
  // fresh programs beat repeated ones on the step actions (docs/eval.md, Sessions 10 and 11).
  programs: 12000,
  docsPerProgram: 8,
  evalPrograms: 100,
  config: assetPath('configs/quickstart.json'),
  programsConfig: assetPath('configs/programs-quickstart.json'),
  tokenizer: assetPath('tokenizer/ndbg-2k.model'),
  backend: 'auto',
  seed: 0,
  workers: 2,
  codeBytes: 2 << 20,
  force: false,
  set: [],
};

/** Wall-clock seconds per stage, by stage name (written to quickstart.json). */
export type StageSeconds = Record<string, number>;

export function stage(n: number, name: string, what: string): void {
  process.stderr.write(`\n[${n}/9] ${name}: ${what}\n`);
}

export function done(where: string, start: number, seconds: StageSeconds, key: string): void {
  seconds[key] = (Date.now() - start) / 1000;
  process.stderr.write(`      -> ${where} (${formatDuration(seconds[key])})\n`);
}

export const pct = (part: number, whole: number): string => `${((100 * part) / Math.max(whole, 1)).toFixed(1)}%`;

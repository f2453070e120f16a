/**
 * Running the official sentencepiece trainer (`spm_train`). The flags that make the exact
 * round trip possible are fixed here, not configurable:
 *   identity normalizer, no dummy prefix, no whitespace cleanup (code keeps its spaces),
 *   byte fallback (no <unk>), the NDL tokens as user-defined symbols (one id each, ids 1..N
 *   in SPECIAL_TOKENS order), no sentencepiece BOS/EOS/PAD (the NDL tokens play those roles).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { SPECIAL_TOKENS } from '../ndl/tokens';
import { UserError } from '../util/errors';
import type { SpmSettings } from './config';
import { ESCAPE, NEWLINE } from './escape';

export const SPM_TRAIN_INSTALL_HELP =
  'spm_train (the sentencepiece trainer) was not found on PATH. Install it: ' +
  'Debian/Ubuntu `sudo apt-get install sentencepiece`, macOS `brew install sentencepiece`, ' +
  'or build https://github.com/google/sentencepiece from source. ' +
  'Only training needs it; the shipped tokenizer/*.model files work without it.';

export interface SpmTrainJob {
  /**
   * spm_train runs in this directory and `input`/`modelPrefix` are relative to it: the trainer
   * stores both paths inside the .model, so absolute temp paths would make every run's bytes
   * (and sha256) differ.
   */
  cwd: string;
  input: string;
  modelPrefix: string;
  vocabSize: number;
  settings: SpmSettings;
  seed: number;
  threads: number;
  /** Bytes; longer training sentences are dropped by spm, so callers chunk below it. */
  maxSentenceBytes: number;
  specialTokens?: readonly string[];
  /** The trainer binary; default $NDBG_SPM_TRAIN or `spm_train` on PATH. */
  bin?: string;
  /** Characters always in the alphabet; each must occur in the input. */
  requiredChars?: string;
}

/** The chars worth forcing into the alphabet that occur in `sample` (see spmTrainArgs). */
export function requiredCharsIn(sample: string): string {
  return ['\t', NEWLINE, ESCAPE].filter((c) => sample.includes(c)).join('');
}

const requiredCharsArg = (chars: string | undefined): string[] => (chars ? [`--required_chars=${chars}`] : []);

/** The full spm_train argument list (recorded in the manifest). */
export function spmTrainArgs(job: SpmTrainJob, symbolsFile: string): string[] {
  const s = job.settings;
  return [
    `--input=${job.input}`,
    `--model_prefix=${job.modelPrefix}`,
    `--vocab_size=${job.vocabSize}`,
    `--model_type=${s.modelType}`,
    `--character_coverage=${s.characterCoverage}`,
    `--max_sentencepiece_length=${s.maxPieceLength}`,
    `--split_by_whitespace=${s.splitByWhitespace}`,
    `--allow_whitespace_only_pieces=${s.allowWhitespaceOnlyPieces}`,
    `--split_digits=${s.splitDigits}`,
    '--byte_fallback=true',
    '--normalization_rule_name=identity',
    '--add_dummy_prefix=false',
    '--remove_extra_whitespaces=false',
    `--user_defined_symbols_file=${symbolsFile}`,
    // Tab and the escape layer's chars stay in the alphabet however rare they are in the sample
    // (only those that occur: the BPE trainer aborts on a required char with frequency 0).
    // A newline piece is a user-defined symbol already (spm_train rejects a char defined twice).
    ...requiredCharsArg(s.newlinePiece ? job.requiredChars?.replace(NEWLINE, '') : job.requiredChars),
    '--unk_id=0',
    '--bos_id=-1',
    '--eos_id=-1',
    '--pad_id=-1',
    `--max_sentence_length=${job.maxSentenceBytes}`,
    '--input_sentence_size=0',
    '--shuffle_input_sentence=false',
    `--num_threads=${job.threads}`,
    `--random_seed=${job.seed}`,
    '--minloglevel=1',
  ];
}

/** Runs spm_train; writes PREFIX.model and PREFIX.vocab. Returns the arguments used. */
export function runSpmTrain(job: SpmTrainJob): string[] {
  fs.mkdirSync(path.dirname(path.resolve(job.cwd, job.modelPrefix)), { recursive: true });
  const symbolsFile = `${job.modelPrefix}.symbols.txt`;
  const symbols = [...(job.specialTokens ?? SPECIAL_TOKENS), ...(job.settings.newlinePiece ? [NEWLINE] : [])];
  fs.writeFileSync(path.resolve(job.cwd, symbolsFile), symbols.join('\n') + '\n');
  const args = spmTrainArgs(job, symbolsFile);
  try {
    const bin = job.bin ?? process.env.NDBG_SPM_TRAIN ?? 'spm_train';
    const r = spawnSync(bin, args, { cwd: job.cwd, encoding: 'utf8', maxBuffer: 1 << 26 });
    if (r.error) {
      if ((r.error as NodeJS.ErrnoException).code === 'ENOENT') throw new UserError(`${bin}: ${SPM_TRAIN_INSTALL_HELP}`);
      throw new UserError(`spm_train could not run: ${r.error.message}`);
    }
    if (r.status !== 0) {
      const tail = (r.stderr || r.stdout || '').trim().split('\n').slice(-8).join('\n');
      throw new UserError(`spm_train failed (exit ${r.status}) for ${job.modelPrefix}:\n${tail}`);
    }
  } finally {
    fs.rmSync(path.resolve(job.cwd, symbolsFile), { force: true });
  }
  return args.map((a) => a.replace(symbolsFile, '<SPECIAL_TOKENS>'));
}

/** Version line of spm_train, or 'unknown'. */
export function spmVersion(): string {
  const r = spawnSync('spm_train', ['--version'], { encoding: 'utf8' });
  return r.error ? 'unknown' : (r.stdout || r.stderr).trim().split('\n')[0] || 'unknown';
}

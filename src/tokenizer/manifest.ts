import * as fs from 'fs';
import type { TokenizerTrainConfig } from './config';
import type { Compression } from './evaluate';

/**
 * OUTDIR/NAME.manifest.json: what a trained tokenizer is and how it was made. `sha256` is the
 * hash of NAME.model; data manifests record it to pin the tokenizer their ids belong to.
 */
export interface TokenizerManifest {
  format: 'ndbg-tokenizer-manifest-v1';
  name: string;
  model: string;
  vocab: string;
  sha256: string;
  vocabSize: number;
  /** Every NDL special token with its id (SPECIAL_TOKENS order). */
  specialTokens: Record<string, number>;
  bosId: number;
  eosId: number;
  padId: number;
  unkId: number;
  /** The reversible text layer applied before sentencepiece (src/tokenizer/escape.ts). */
  escape: string;
  spmTrain: { version: string; args: string[] };
  training: {
    seed: number;
    sources: Array<{ name: string; kind: string; role: string; trainBytes: number; trainDocs: number; heldOutBytes: number; heldOutDocs: number; [k: string]: unknown }>;
    totalBytes: number;
    sentences: number;
  };
  /** Compression on held-out documents for the shipped settings and each alternative. */
  comparison: Array<{ variant: string; model: string; settings: Record<string, unknown>; heldOut: Record<string, Compression> }>;
  /** The resolved config: `ndbg tokenizer train --config` on this JSON retrains the same model. */
  config: TokenizerTrainConfig;
}

export function writeManifest(file: string, manifest: TokenizerManifest): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(manifest, null, 2) + '\n');
  fs.renameSync(tmp, file);
}

export function readManifest(file: string): TokenizerManifest {
  const m = JSON.parse(fs.readFileSync(file, 'utf8')) as TokenizerManifest;
  if (m.format !== 'ndbg-tokenizer-manifest-v1') throw new Error(`${file}: not an ndbg tokenizer manifest`);
  return m;
}

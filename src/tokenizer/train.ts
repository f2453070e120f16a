/**
 * `ndbg tokenizer train`: sample the sources, train the configured sentencepiece model and
 * each alternative on the same sample, measure them on the held-out documents, and write
 * OUTDIR/NAME.model, NAME.vocab, NAME.manifest.json (alternatives under OUTDIR/alternatives/).
 *
 * Files are trained in a temporary directory and moved into place only when everything
 * succeeded, so a failed run never leaves a half-written tokenizer behind.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { SPECIAL_TOKENS } from '../ndl/tokens';
import { SpmSettings, spmSettingsSchema, TokenizerTrainConfig } from './config';
import { ESCAPE_SCHEME, escapeForSpm } from './escape';
import { chunkForTraining, Compression, measureCompression } from './evaluate';
import { Tokenizer } from './index';
import { TokenizerManifest, writeManifest } from './manifest';
import { sampleSource, SourceSample } from './sources';
import { requiredCharsIn, runSpmTrain, spmVersion } from './spm';

export interface TrainOptions {
  /** Directory relative paths in the config are resolved against. */
  cwd?: string;
  log?: (line: string) => void;
}

export interface TrainResult {
  manifest: TokenizerManifest;
  manifestPath: string;
  modelPath: string;
}

export async function sampleAll(cfg: TokenizerTrainConfig, cwd: string): Promise<SourceSample[]> {
  const samples: SourceSample[] = [];
  for (const [i, src] of cfg.sources.entries()) {
    samples.push(
      await sampleSource(src, i, { seed: cfg.seed, heldOutFraction: cfg.heldOutFraction, heldOutMaxBytes: cfg.heldOutMaxBytes, cwd }),
    );
  }
  return samples;
}

/** Held-out documents grouped by role (ndl, code, text). */
export function heldOutByRole(samples: SourceSample[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const s of samples) if (s.heldOut.length) (out[s.role] ??= []).push(...s.heldOut);
  return out;
}

export async function trainTokenizer(cfg: TokenizerTrainConfig, opts: TrainOptions = {}): Promise<TrainResult> {
  const cwd = opts.cwd ?? process.cwd();
  const log = opts.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const outDir = path.resolve(cwd, cfg.outDir);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-tokenizer-'));
  try {
    const samples = await sampleAll(cfg, cwd);
    for (const s of samples) {
      log(`source ${s.name} (${s.kind}): train ${s.train.length} docs ${mb(s.trainBytes)}, held out ${s.heldOut.length} docs ${mb(s.heldOutBytes)}`);
    }
    const input = 'train.txt';
    const sentences = writeTrainingText(path.join(work, input), samples, cfg.chunkChars);
    const totalBytes = samples.reduce((a, s) => a + s.trainBytes, 0);
    if (totalBytes === 0) throw new Error('the sources gave no training text');
    log(`training text: ${mb(totalBytes)} in ${sentences} sentences`);

    const variants: Array<{ variant: string; settings: SpmSettings; prefix: string; final: string }> = [
      { variant: 'shipped', settings: cfg.spm, prefix: cfg.name, final: path.join(outDir, cfg.name) },
      ...cfg.alternatives.map((alt) => ({
        variant: alt.name,
        settings: spmSettingsSchema.parse({ ...cfg.spm, ...alt.spm }),
        prefix: path.join('alternatives', `${cfg.name}.${alt.name}`),
        final: path.join(outDir, 'alternatives', `${cfg.name}.${alt.name}`),
      })),
    ];
    const held = heldOutByRole(samples);
    const comparison: TokenizerManifest['comparison'] = [];
    let args: string[] = [];
    const requiredChars = requiredCharsIn(fs.readFileSync(path.join(work, input), 'utf8'));
    for (const v of variants) {
      const t0 = Date.now();
      const used = runSpmTrain({
        cwd: work,
        input,
        modelPrefix: v.prefix,
        vocabSize: cfg.vocabSize,
        settings: v.settings,
        seed: cfg.seed,
        threads: cfg.threads,
        maxSentenceBytes: 4 * cfg.chunkChars + 16,
        requiredChars,
      });
      if (v.variant === 'shipped') args = used;
      const tok = await Tokenizer.load(path.join(work, `${v.prefix}.model`));
      const heldOut: Record<string, Compression> = {};
      for (const [role, texts] of Object.entries(held)) heldOut[role] = measureCompression(tok, texts);
      await tok.close();
      comparison.push({ variant: v.variant, model: path.relative(outDir, `${v.final}.model`), settings: v.settings, heldOut });
      const summary = Object.entries(heldOut)
        .map(([r, c]) => `${r} ${c.bytesPerToken} B/tok (round trip ${c.exactRoundTrips}/${c.docs})`)
        .join(', ');
      log(`${v.variant}: trained in ${((Date.now() - t0) / 1000).toFixed(1)}s; held out: ${summary || 'none'}`);
    }

    // Everything succeeded: move the files into place, the manifest last.
    for (const v of variants) {
      fs.mkdirSync(path.dirname(v.final), { recursive: true });
      for (const ext of ['.model', '.vocab']) fs.copyFileSync(path.join(work, v.prefix + ext), v.final + ext);
    }
    const modelPath = path.join(outDir, `${cfg.name}.model`);
    const tok = await Tokenizer.load(modelPath);
    const manifest: TokenizerManifest = {
      format: 'ndbg-tokenizer-manifest-v1',
      name: cfg.name,
      model: `${cfg.name}.model`,
      vocab: `${cfg.name}.vocab`,
      sha256: tok.sha256,
      vocabSize: tok.vocabSize,
      specialTokens: tok.specialTokenIds(),
      bosId: tok.bosId,
      eosId: tok.eosId,
      padId: tok.padId,
      unkId: tok.unkId,
      escape: ESCAPE_SCHEME,
      spmTrain: { version: spmVersion(), args },
      training: {
        seed: cfg.seed,
        sources: samples.map((s) => ({
          name: s.name,
          kind: s.kind,
          role: s.role,
          ...s.description,
          trainBytes: s.trainBytes,
          trainDocs: s.train.length,
          heldOutBytes: s.heldOutBytes,
          heldOutDocs: s.heldOut.length,
        })),
        totalBytes,
        sentences,
      },
      comparison,
      config: cfg,
    };
    const manifestPath = path.join(outDir, `${cfg.name}.manifest.json`);
    writeManifest(manifestPath, manifest);
    log(`wrote ${modelPath} (vocab ${tok.vocabSize}, ${SPECIAL_TOKENS.length} special tokens, sha256 ${tok.sha256.slice(0, 12)}…)`);
    return { manifest, manifestPath, modelPath };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** Writes the escaped, chunked training sentences (one per line); returns their count. */
function writeTrainingText(file: string, samples: SourceSample[], chunkChars: number): number {
  const fd = fs.openSync(file, 'w');
  let n = 0;
  try {
    for (const s of samples) {
      for (const text of s.train) {
        const lines = chunkForTraining(escapeForSpm(text), chunkChars).filter((l) => l.length > 0);
        if (lines.length) fs.writeSync(fd, lines.join('\n') + '\n');
        n += lines.length;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return n;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(2)} MB`;
}

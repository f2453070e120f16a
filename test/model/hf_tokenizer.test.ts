import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { exportHfCommand } from '../../src/cli/commands/export-hf';
import { initBackend } from '../../src/backend/backend';
import { writeModelCheckpoint } from '../../src/model/checkpoint';
import { defaultSamplerConfig } from '../../src/ndl/config';
import { allStepDocuments, sampleDocuments } from '../../src/ndl/generate';
import { SPECIAL_TOKENS } from '../../src/ndl/tokens';
import { Tokenizer } from '../../src/tokenizer';
import { parseModelProto, PieceType } from '../../src/tokenizer/model-proto';
import { traceInProcess } from '../../src/trace/inprocess';
import type { ProgramRecord } from '../../src/trace/types';
import { peerPython } from '../helpers/peer-python';
import { testConfig, testModel } from './helpers';

const ROOT = path.join(__dirname, '..', '..');
const TOKENIZER = path.join(ROOT, 'tokenizer', 'ndbg-2k.model');

/** NDL documents made by ndbg's own pipeline from the test fixtures' programs (traced in-process). */
function pipelineDocuments(): string[] {
  const files = ['ndl/programs.jsonl', 'debugger/programs.jsonl', 'eval/programs.jsonl'].map((f) => path.join(ROOT, 'test', 'fixtures', f));
  const programs: ProgramRecord[] = files.flatMap((file, i) =>
    fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => {
        const p = JSON.parse(l) as ProgramRecord;
        return { ...p, id: `${i}-${p.id}` };
      }),
  );
  const docs: string[] = [];
  for (const trace of traceInProcess(programs)) {
    docs.push(...sampleDocuments(trace, 7, 3, defaultSamplerConfig()).records.map((r) => r.text));
    docs.push(...allStepDocuments(trace).map((r) => r.text));
  }
  return docs;
}

/** Texts where a lookalike tokenizer would differ: literal piece names, the escape layer's own chars, whitespace. */
const EDGE_CASES = [
  '',
  'def f(x):\n    return x + 1\n',
  'literal <0x41> <0x0A> <unk> <s></s> and ▁ marks ▁▁',
  'escapes \uE000 \uE00A \uE000\uE00A \uE000\uE000\n \uE000▁ \uE081 \uE000\uE001 \uE000\uE003 \uE001\uE003',
  'tabs\tand\r\nCRLF  trailing spaces   \n\n\n   indented\n',
  'emoji 🎉 ünïcödé 中文 \u0000 nul',
  'x<|frame_sep|>y<|frame_sep|><|pad|><|end_of_text|>',
  'partial <|frame_sep <|nope|> <| |>',
  '  leading spaces and 1234567890 digits',
];

describe('export-hf tokenizer and model load in transformers as-is', () => {
  let dir: string;
  let hf: string;
  let tok: Tokenizer;
  const config = testConfig({ vocab_size: 2048, max_seq_len: 64 });
  let model: ReturnType<typeof testModel>;

  beforeAll(async () => {
    await initBackend('cpu', () => undefined);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-hftok-'));
    tok = await Tokenizer.load(TOKENIZER);
    model = testModel(config, 5);
    const ckpt = path.join(dir, 'ckpt');
    writeModelCheckpoint(ckpt, config, model.getWeights(), { tokenizerFile: TOKENIZER });
    hf = path.join(dir, 'hf');
    await exportHfCommand.handler({ checkpoint: ckpt, out: hf, $0: 'ndbg', _: [] } as never);
  });
  afterAll(() => {
    model.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the export holds tokenizer.json, tokenizer_config.json and special_tokens_map.json sized to the model', () => {
    const tj = JSON.parse(fs.readFileSync(path.join(hf, 'tokenizer.json'), 'utf8'));
    expect(tj.model.type).toBe('Unigram');
    expect(tj.model.vocab).toHaveLength(config.vocab_size);
    expect(tj.model.byte_fallback).toBe(true);
    expect(tj.added_tokens.map((t: { content: string }) => t.content)).toEqual([...SPECIAL_TOKENS]);
    expect(tj.added_tokens.every((t: { special: boolean; normalized: boolean }) => t.special && !t.normalized)).toBe(true);
    const tc = JSON.parse(fs.readFileSync(path.join(hf, 'tokenizer_config.json'), 'utf8'));
    expect(tc).toMatchObject({ bos_token: '<|begin_of_text|>', eos_token: '<|end_of_text|>', pad_token: '<|pad|>', add_bos_token: false });
    const sm = JSON.parse(fs.readFileSync(path.join(hf, 'special_tokens_map.json'), 'utf8'));
    expect(sm.bos_token.content).toBe('<|begin_of_text|>');
    const cfg = JSON.parse(fs.readFileSync(path.join(hf, 'config.json'), 'utf8'));
    expect(cfg).toMatchObject({ vocab_size: 2048, bos_token_id: tok.bosId, eos_token_id: tok.eosId, pad_token_id: tok.padId });
  });

  test('AutoTokenizer gives ndbg ids on ≥ 100 NDL documents and round-trips; AutoModelForCausalLM logits match', () => {
    const peer = peerPython(['transformers', 'tokenizers', 'torch']);
    if ('skip' in peer) {
      process.stderr.write(`skipped: ${peer.skip}\n`);
      return;
    }
    const docs = pipelineDocuments();
    expect(docs.length).toBeGreaterThanOrEqual(100);
    const fixtureDocs = fs
      .readFileSync(path.join(ROOT, 'test', 'fixtures', 'tokenizer', 'ndl-docs.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { text: string }).text);
    const code = fs.readFileSync(path.join(ROOT, 'test', 'fixtures', 'tokenizer', 'tricky.py'), 'utf8');
    const texts = [...docs, ...fixtureDocs, code, ...EDGE_CASES];
    const ours = texts.map((t) => tok.encode(t));
    // Logits on real document prefixes, the model's whole context.
    const logitIds = ours.filter((ids) => ids.length >= config.max_seq_len).slice(0, 3).map((ids) => ids.slice(0, config.max_seq_len));
    expect(logitIds).toHaveLength(3);
    const request = path.join(dir, 'request.json');
    fs.writeFileSync(request, JSON.stringify({ texts, logit_ids: logitIds, skip_text: 'a<|frame_sep|>b<|call_sep|> c' }));
    const r = spawnSync(peer.python, [path.join(__dirname, 'hf_transformers_check.py'), hf, request], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (r.status !== 0) throw new Error(`hf_transformers_check.py failed:\n${r.stderr}`);
    const out = JSON.parse(r.stdout) as {
      transformers: string;
      class: string;
      len: number;
      bos: number;
      eos: number;
      pad: number;
      special_ids: number[];
      ids: number[][];
      decoded: string[];
      skip_decoded: string;
      logits: number[][][];
    };
    expect(out.len).toBe(config.vocab_size);
    expect([out.bos, out.eos, out.pad]).toEqual([tok.bosId, tok.eosId, tok.padId]);
    for (const id of Object.values(tok.specialTokenIds())) expect(out.special_ids).toContain(id);
    // sentencepiece sums piece scores in float32, tokenizers in float64: where two segmentations of
    // a text score the same up to float32 rounding of the running total, they may pick differently.
    // Everything else must be identical; such a difference must be a tie of that kind.
    const pieces = parseModelProto(fs.readFileSync(TOKENIZER)).pieces;
    const score = (ids: number[]) => ids.reduce((a, id) => a + (pieces[id].type === PieceType.NORMAL ? pieces[id].score : 0), 0);
    let sameIds = 0;
    let sameDocs = 0;
    let roundTrips = 0;
    const notTies: string[] = [];
    let ties = 0;
    texts.forEach((t, i) => {
      if (JSON.stringify(out.ids[i]) === JSON.stringify(ours[i])) {
        sameIds++;
        if (i < docs.length) sameDocs++;
      } else {
        const a = score(ours[i]);
        const b = score(out.ids[i]);
        // float32 keeps 24 bits: the running total can be off by ~|total|·2^-24 per addition.
        const tolerance = Math.abs(a) * 2 ** -24 * ours[i].length;
        if (Math.abs(a - b) <= tolerance) ties++;
        else if (notTies.length < 3) notTies.push(`${JSON.stringify(t.slice(0, 80))}: ndbg ${ours[i].slice(0, 12)} (score ${a}) hf ${out.ids[i].slice(0, 12)} (score ${b})`);
      }
      if (out.decoded[i] === t) roundTrips++;
    });
    process.stderr.write(
      `transformers ${out.transformers} (${out.class}): same ids on ${sameIds}/${texts.length} texts ` +
        `(${sameDocs}/${docs.length} pipeline NDL documents; the other ${ties} are float32 score ties), round trips ${roundTrips}/${texts.length}\n`,
    );
    expect(notTies).toEqual([]);
    expect(sameDocs).toBeGreaterThanOrEqual(100);
    expect(sameIds).toBeGreaterThanOrEqual(Math.ceil(0.95 * texts.length));
    // The short texts (no long running total) match exactly, including every edge case.
    texts.forEach((t, i) => {
      if (t.length < 200) expect({ text: t, ids: out.ids[i] }).toEqual({ text: t, ids: ours[i] });
    });
    expect(roundTrips).toBe(texts.length);
    expect(out.skip_decoded).toBe('ab c');

    const a = model.logits(logitIds.map((ids) => Int32Array.from(ids))).dataSync();
    const flat = out.logits.flat(2);
    expect(flat).toHaveLength(a.length);
    let maxDiff = 0;
    flat.forEach((v, i) => (maxDiff = Math.max(maxDiff, Math.abs(v - a[i]))));
    process.stderr.write(`AutoModelForCausalLM vs ndbg: max |Δlogit| = ${maxDiff.toExponential(2)} over ${flat.length} logits\n`);
    expect(maxDiff).toBeLessThanOrEqual(1e-4);
  });
});

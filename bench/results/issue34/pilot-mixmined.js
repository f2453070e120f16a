// Pilot for issue 34: the session-14 quickstart data plus mined real functions (train split).
// usage: node mixmined.js OUT MINED_JSONL
const fs = require('fs');
const root = '/work/main/dist';
const { defaultSamplerConfig, samplerConfigSchema } = require(`${root}/ndl/config`);
const { sampleDocuments } = require(`${root}/ndl/generate`);
const { writeDocumentsSidecar } = require(`${root}/ndl/run`);
const { buildDataset } = require(`${root}/data/build`);
const { Tokenizer } = require(`${root}/tokenizer`);
const { splitRecords } = require(`${root}/programs/splits`);
const { SandboxPool } = require(`${root}/trace/pool`);
const [out, minedFile] = process.argv.slice(2);
const q = '/work/fresh/runs/quickstart';
(async () => {
  fs.mkdirSync(`${out}/ndl`, { recursive: true });
  const recs = fs.readFileSync(minedFile, 'utf8').trim().split('\n').map(JSON.parse).map(({ source, ...r }) => r);
  const split = await splitRecords(recs, { train: 0.9, validation: 0.05, test: 0.05 }, '');
  for (const s of ['train', 'validation', 'test']) fs.writeFileSync(`${out}/mined-${s}.jsonl`, split.records[s].map((r) => JSON.stringify(r) + '\n').join(''));
  const pool = new SandboxPool(2, { maxEvents: 1016 });
  const traces = (await Promise.all(split.records.train.map((p) => pool.trace(p.id, p.code, `${p.entry}(${p.input})`)))).map((t, i) => ({ ...t, id: split.records.train[i].id }));
  await pool.close();
  const tok = await Tokenizer.load('/work/main/tokenizer/ndbg-2k.model');
  const sampler = samplerConfigSchema.parse({ ...defaultSamplerConfig(), maxTokens: 513, forwardShare: 2 });
  const countTokens = (t) => tok.encodeIds(t).length;
  let tooLong = 0;
  const docs = traces.flatMap((t) => { const r = sampleDocuments(t, 0, 8, sampler, { countTokens }); tooLong += r.tooLong; return r.records; });
  const file = `${out}/ndl/mined.jsonl`;
  fs.writeFileSync(file, docs.map((d) => JSON.stringify(d) + '\n').join(''));
  writeDocumentsSidecar(file, { traces, generator: { policy: 'sampled', seed: 0, per_program: 8, sampler }, documents: docs.length });
  console.log('mined train records', split.records.train.length, 'docs', docs.length, 'too long', tooLong);
  const m = await buildDataset({ sources: [{ name: 'ndl', path: `${q}/ndl/train.jsonl`, kind: 'ndl' }, { name: 'mined', path: file, kind: 'ndl' }, { name: 'code', path: `${q}/code/stdlib.jsonl`, kind: 'code' }],
    out: `${out}/data`, tokenizer: '/work/main/tokenizer/ndbg-2k.model', seqLen: 512, shardMb: 64, valFraction: 0.02, splitSeed: 0, maskContext: false, workers: 1, force: true });
  console.log('tokens', m.sources.map((s) => [s.name, s.train.tokens]));
})().catch((e) => { console.error(e); process.exit(1); });

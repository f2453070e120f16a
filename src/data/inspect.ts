/**
 * `ndbg data inspect`: a human summary of a data set's manifest, an optional full verification
 * of every shard, and one row decoded back to text with the tokenizer it was built with.
 */
import * as fs from 'fs';
import * as path from 'path';
import { UserError } from '../util/errors';
import { loadShard, openDatasets } from './dataset';
import { MANIFEST_FILE, readManifest, type DataSplit } from './manifest';
import { loadTextTokenizer, type TextTokenizer } from '../tokenizer';

export interface InspectOptions {
  dir: string;
  split: DataSplit;
  source?: string;
  row: number;
  /** Override the tokenizer path recorded in the manifest. */
  tokenizer?: string;
  /** Read every shard and check its sha256 and structure. */
  verify: boolean;
  /** Characters of decoded text to print at most. */
  maxChars: number;
}

const mb = (b: number) => (b / 2 ** 20).toFixed(2);

export async function inspectDataset(o: InspectOptions, write: (s: string) => void): Promise<void> {
  const m = readManifest(o.dir);
  write(`data set ${o.dir} (${MANIFEST_FILE}, ${m.format})\n`);
  write(`  tokenizer  ${m.tokenizer.path}  sha256 ${m.tokenizer.sha256.slice(0, 16)}…  vocab ${m.tokenizer.vocabSize}  bos/eos/pad ${m.tokenizer.bosId}/${m.tokenizer.eosId}/${m.tokenizer.padId}\n`);
  write(`  rows       seq_len ${m.seqLen} (+1 = ${m.rowLen} tokens per row), tokens ${m.tokenDtype}, mask NDL context: ${m.packing.maskContext ? 'yes' : 'no'}\n`);
  write(`  split      validation fraction ${m.packing.valFraction} by document (seed ${m.packing.splitSeed})\n`);
  for (const s of m.sources) {
    write(`  source ${s.name} (${s.kind}) from ${s.path}${s.python ? `, python ${s.python}` : ''}\n`);
    for (const split of ['train', 'val'] as const) {
      const p = s[split];
      const bytes = p.shards.reduce((a, x) => a + x.bytes, 0);
      write(`    ${split.padEnd(5)} ${p.documents} docs, ${mb(p.textBytes)} MB text, ${p.rows} rows, ${p.tokens} tokens, ${p.shards.length} shards (${mb(bytes)} MB)\n`);
    }
    if (s.generator !== null && s.generator !== undefined) write(`    generator ${JSON.stringify(s.generator).slice(0, 200)}\n`);
  }
  const ds = openDatasets([o.dir], o.split);
  if (o.verify) {
    let n = 0;
    for (const src of ds.sources) for (let k = 0; k < src.shards.length; k++, n++) loadShard(src, k, o.split, true);
    write(`  verified ${n} ${o.split} shards: sizes, sha256, Arrow structure and metadata match the manifest\n`);
  }
  const src = o.source ? ds.sources.find((s) => s.name === o.source) : ds.sources.find((s) => s.rows > 0);
  if (!src) throw new UserError(o.source ? `${o.dir}: no source "${o.source}"` : `${o.dir}: no ${o.split} rows to sample`);
  if (o.row < 0 || o.row >= src.rows) throw new UserError(`--row ${o.row}: source ${src.name} has ${src.rows} ${o.split} rows`);
  let k = 0;
  let r = o.row;
  while (r >= src.shards[k].entry.rows) r -= src.shards[k++].entry.rows;
  const shard = loadShard(src, k, o.split, true);
  const L = shard.rowLen;
  const ids = Array.from(shard.tokens.subarray(r * L, (r + 1) * L));
  const mask = shard.mask.subarray(r * L, (r + 1) * L);
  const docs = new Set(shard.docIds.subarray(r * L, (r + 1) * L));
  const targets = mask.reduce((a, v) => a + v, 0);
  write(`\nrow ${o.row} of ${src.name}/${o.split} (${path.relative(process.cwd(), src.shards[k].file)} row ${r}): `);
  write(`${targets} of ${L} tokens are loss targets; documents ${[...docs].join(', ')}\n`);
  const tok = await sampleTokenizer(o, m.tokenizer.path, m.tokenizer.sha256, write);
  if (!tok) {
    write(`ids: ${ids.slice(0, 200).join(' ')}${ids.length > 200 ? ' …' : ''}\n`);
    return;
  }
  const text = tok.decode(ids);
  write(`${text.length > o.maxChars ? text.slice(0, o.maxChars) + ` … (${text.length - o.maxChars} more characters)` : text}\n`);
}

async function sampleTokenizer(o: InspectOptions, recorded: string, sha: string, write: (s: string) => void): Promise<TextTokenizer | undefined> {
  const spec = o.tokenizer ?? recorded;
  if (spec !== 'byte' && !fs.existsSync(spec)) {
    write(`(tokenizer ${spec} not found; pass --tokenizer to decode; showing ids)\n`);
    return undefined;
  }
  const tok = await loadTextTokenizer(spec);
  if (tok.sha256 !== sha) throw new UserError(`tokenizer ${spec} (sha256 ${tok.sha256.slice(0, 12)}…) is not the one ${o.dir} was built with (${sha.slice(0, 12)}…)`);
  return tok;
}

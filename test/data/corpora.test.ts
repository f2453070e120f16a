import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as zlib from 'zlib';
import { readManifest, type Manifest } from '../../src/data/manifest';
import { parseSourceSpec } from '../../src/data/sources';
import { detectCorpusFormat } from '../../src/data/corpus_format';
import { peerPython } from '../helpers/peer-python';
import { buildFrom, tmpDir } from './helpers';

/**
 * Corpora as users keep them: the same 40 documents (test/fixtures/corpora/make.py) as JSONL,
 * gzip and zstd JSONL, parquet written by pyarrow (snappy, its default, and zstd), an Arrow
 * IPC file and a `datasets` save_to_disk directory (Arrow stream format) must build into
 * byte-identical shards, and a named text column must read like the default one.
 */
const CORPORA = path.join(__dirname, '..', 'fixtures', 'corpora');
const root = path.resolve(__dirname, '../..');
const dir = tmpDir('corpora');

/** Every shard's sha256, and the document counts: equal lists mean byte-identical shards. */
function shardsOf(m: Manifest) {
  return m.sources.map((s) => ({
    name: s.name,
    documents: [s.train.documents, s.val.documents],
    train: s.train.shards.map((x) => x.sha256),
    val: s.val.shards.map((x) => x.sha256),
  }));
}

let built = 0;
async function build(spec: string) {
  // The split depends on each document's key: a val fraction makes the test see it too.
  return buildFrom(path.join(dir, `b${built++}`), [spec], { valFraction: 0.25, seqLen: 24 });
}

const FORMATS: Array<[string, string, ReturnType<typeof detectCorpusFormat> | 'directory']> = [
  ['gzip JSONL (two members)', 'docs.jsonl.gz', 'jsonl.gz'],
  ['zstd JSONL', 'docs.jsonl.zst', 'jsonl.zst'],
  ['parquet, pyarrow defaults (snappy, 3 row groups)', 'docs.parquet', 'parquet'],
  ['parquet, zstd', 'docs-zstd.parquet', 'parquet'],
  ['Arrow IPC file format', 'docs-ipc-file.arrow', 'arrow-file'],
  ['Arrow IPC stream format, large_string column', 'docs-large-string.arrow', 'arrow-stream'],
  ['datasets save_to_disk Arrow file (stream format)', 'hf-save-to-disk/data-00000-of-00001.arrow', 'arrow-stream'],
  ['datasets save_to_disk directory', 'hf-save-to-disk', 'directory'],
];

describe('corpus formats build into the shards of the equivalent JSONL', () => {
  let reference: ReturnType<typeof shardsOf>;
  beforeAll(async () => {
    reference = shardsOf(await build(`web=${path.join(CORPORA, 'docs.jsonl')}:text`));
    expect(reference[0].documents[0] + reference[0].documents[1]).toBe(40);
    expect(reference[0].documents[1]).toBeGreaterThan(0);
  });

  it.each(FORMATS)('%s', async (_what, file, format) => {
    const p = path.join(CORPORA, file);
    if (format !== 'directory') expect(detectCorpusFormat(p)).toBe(format);
    expect(shardsOf(await build(`web=${p}:text`))).toEqual(reference);
  });

  it('reads a named column (NAME=PATH:kind:COLUMN) and records it in the manifest', async () => {
    const m = await build(`web=${path.join(CORPORA, 'content.parquet')}:text:content`);
    expect(shardsOf(m)).toEqual(reference);
    expect(m.sources[0].column).toBe('content');
    expect(readManifest(path.join(dir, `b${built - 1}`)).sources[0].column).toBe('content');
  });

  it('a datasets save_to_disk directory is a text source without a kind', () => {
    expect(parseSourceSpec(`hf=${path.join(CORPORA, 'hf-save-to-disk')}`).kind).toBe('text');
  });
});

describe('naming the text column', () => {
  const content = path.join(CORPORA, 'content.parquet');

  it('keeps every existing spec form and adds :kind:column', () => {
    const jsonl = path.join(CORPORA, 'docs.jsonl');
    expect(parseSourceSpec(`w=${jsonl}`)).toEqual({ name: 'w', path: jsonl, kind: 'text' });
    expect(parseSourceSpec(`w=${jsonl}:code`)).toEqual({ name: 'w', path: jsonl, kind: 'code' });
    expect(parseSourceSpec(`w=${content}:text:content`)).toEqual({ name: 'w', path: content, kind: 'text', column: 'content' });
    expect(parseSourceSpec(`w=${content}:code:content`)).toEqual({ name: 'w', path: content, kind: 'code', column: 'content' });
    expect(() => parseSourceSpec(`w=${content}:ndl:content`)).toThrow(/ndl sources always read the field "text"/);
    expect(() => parseSourceSpec(`w=${content}:txt:content`)).toThrow(/unknown kind "content".*NAME=PATH\[:kind\[:column\]\]/);
    expect(() => parseSourceSpec(`w=${content}:text:`)).toThrow(/empty column name/);
  });

  it('a missing column names the file and lists the columns present', async () => {
    await expect(build(`w=${content}:text:body`)).rejects.toThrow(
      /content\.parquet: no column "body"; its columns are content \(STRING\), stars \(INT64\), id \(STRING\)\. Name the text column with NAME=PATH:kind:COLUMN/,
    );
    // The default column, absent: the same message, so a user learns the syntax from it.
    await expect(build(`w=${content}:text`)).rejects.toThrow(/content\.parquet: no column "text"; its columns are content/);
  });

  it('a column that is not a string is refused, by name and type', async () => {
    await expect(build(`w=${content}:text:stars`)).rejects.toThrow(/content\.parquet: column "stars" is INT64, not a string; its columns are/);
    await expect(build(`w=${path.join(CORPORA, 'docs-ipc-file.arrow')}:text:id2`)).rejects.toThrow(/docs-ipc-file\.arrow: no column "id2"; its columns are id \(Utf8\), text \(Utf8\)/);
  });

  it('a JSONL record without the named field is an error naming file:line', async () => {
    await expect(build(`w=${path.join(CORPORA, 'docs.jsonl.zst')}:text:content`)).rejects.toThrow(/docs\.jsonl\.zst:1: field "content" must be a string/);
  });
});

describe('broken compressed input', () => {
  it('a corrupt gzip or zstd file is one error naming the file', async () => {
    const gz = path.join(dir, 'broken.jsonl.gz');
    const good = zlib.gzipSync(Buffer.from('{"text": "a"}\n'.repeat(100)));
    fs.writeFileSync(gz, Buffer.concat([good.subarray(0, 10), Buffer.alloc(40, 7)]));
    await expect(build(`w=${gz}:text`)).rejects.toThrow(/broken\.jsonl\.gz: cannot decompress it as gzip/);
    const zst = path.join(dir, 'broken.jsonl.zst');
    fs.writeFileSync(zst, Buffer.concat([fs.readFileSync(path.join(CORPORA, 'docs.jsonl.zst')).subarray(0, 40), Buffer.alloc(40, 7)]));
    await expect(build(`w=${zst}:text`)).rejects.toThrow(/broken\.jsonl\.zst: cannot decompress it as zstd/);
  });

  it('a truncated parquet file is one error naming the file', async () => {
    const pq = path.join(dir, 'truncated.parquet');
    const bytes = fs.readFileSync(path.join(CORPORA, 'docs.parquet'));
    fs.writeFileSync(pq, bytes.subarray(0, bytes.length - 100));
    await expect(build(`w=${pq}:text`)).rejects.toThrow(/truncated\.parquet: not a readable parquet file/);
  });
});

describe('fixtures regenerated by the Python libraries on this machine', () => {
  it('pyarrow (and datasets when installed) write files that build like the JSONL', async () => {
    const peer = peerPython(['pyarrow']);
    if ('skip' in peer) {
      process.stderr.write(`skipped: ${peer.skip}\n`);
      return;
    }
    const out = path.join(dir, 'regenerated');
    const r = spawnSync(peer.python, [path.join(CORPORA, 'make.py'), out], { encoding: 'utf8' });
    expect(r.stderr).not.toMatch(/Traceback/);
    expect(r.status).toBe(0);
    const writer = JSON.parse(fs.readFileSync(path.join(out, 'hf-save-to-disk', 'state.json'), 'utf8')).writer as string;
    if (!writer.startsWith('datasets')) process.stderr.write(`skipped: the datasets library is not installed for ${peer.python}; hf-save-to-disk/ was written by ${writer}\n`);
    // The same documents, so the same bytes as the committed JSONL.
    expect(fs.readFileSync(path.join(out, 'docs.jsonl'))).toEqual(fs.readFileSync(path.join(CORPORA, 'docs.jsonl')));
    const reference = shardsOf(await build(`web=${path.join(out, 'docs.jsonl')}:text`));
    for (const [, file] of FORMATS) expect(shardsOf(await build(`web=${path.join(out, file)}:text`))).toEqual(reference);
    expect(shardsOf(await build(`web=${path.join(out, 'content.parquet')}:text:content`))).toEqual(reference);
  });
});

describe('the CLI', () => {
  it('builds a parquet source and reports a bad column as one line, exit 2, no stack trace', () => {
    const cli = path.join(root, 'bin', 'ndbg.js');
    const run = (args: string[]) => spawnSync(process.execPath, [cli, 'data', 'build', '--tokenizer', 'byte', '--seq-len', '24', '--workers', '0', '--quiet', ...args], { cwd: dir, encoding: 'utf8' });
    const ok = run(['--source', `web=${path.join(CORPORA, 'content.parquet')}:text:content`, '--out', 'cli-ok']);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(readManifest(path.join(dir, 'cli-ok')).sources[0].train.documents + readManifest(path.join(dir, 'cli-ok')).sources[0].val.documents).toBe(40);
    const bad = run(['--source', `web=${path.join(CORPORA, 'content.parquet')}:text:stars`, '--out', 'cli-bad']);
    expect(bad.status).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^ndbg: .*content\.parquet: column "stars" is INT64, not a string/);
  });
});

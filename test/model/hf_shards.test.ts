import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { initBackend } from '../../src/backend/backend';
import { loadModelFromCheckpoint, writeModelCheckpoint } from '../../src/model/checkpoint';
import { HF_INDEX_FILE, hfTensorOrder, parseShardSize, planShards, readHfModel, shardFileName } from '../../src/model/hf';
import { readSafetensors } from '../../src/model/safetensors';
import { parameterShapes } from '../../src/model/config';
import { exportHfCommand } from '../../src/cli/commands/export-hf';
import { importHfCommand } from '../../src/cli/commands/import-hf';
import { UserError } from '../../src/util/errors';
import { Rng } from '../../src/util/rng';
import { peerPython } from '../helpers/peer-python';
import { tempDir } from '../helpers/tmp';
import { randomIds, testConfig, testModel } from './helpers';

const exportTo = (checkpoint: string, out: string, maxShardSize?: string) =>
  exportHfCommand.handler({ checkpoint, out, 'max-shard-size': maxShardSize, $0: 'ndbg', _: [] } as never);

describe('sharding as transformers does it', () => {
  test('a new shard starts when the next tensor would pass the limit; an oversized tensor gets its own shard where it is met', () => {
    // huggingface_hub's own docstring example: limit 10, sizes [6, 6, 2, 6, 2, 2] → [6], [6+2], [6+2+2].
    const sizes: Array<[string, number]> = [6, 6, 2, 6, 2, 2].map((b, i) => [`t${i}`, b]);
    expect(planShards(sizes, 10)).toEqual([['t0'], ['t1', 't2'], ['t3', 't4', 't5']]);
    // Exactly at the limit still fits.
    expect(planShards([['a', 5], ['b', 5], ['c', 1]], 10)).toEqual([['a', 'b'], ['c']]);
    // The oversized tensor is pushed while the open shard stays open, so it comes first.
    expect(planShards([['a', 1], ['big', 20], ['c', 1]], 10)).toEqual([['big'], ['a', 'c']]);
    expect(planShards([['a', 3]], 10)).toEqual([['a']]);
    expect(shardFileName(0, 3)).toBe('model-00001-of-00003.safetensors');
  });

  test('sizes are decimal as parse_size_to_int reads them; bad sizes name the flag', () => {
    expect(parseShardSize('5GB')).toBe(5e9);
    expect(parseShardSize('2.5GB')).toBe(2.5e9);
    expect(parseShardSize('500mb')).toBe(5e8);
    expect(parseShardSize('10KB')).toBe(1e4);
    expect(parseShardSize('1234')).toBe(1234);
    expect(parseShardSize(77)).toBe(77);
    for (const bad of ['5GiB', 'big', '', '0', '-3MB']) {
      expect(() => parseShardSize(bad)).toThrow(UserError);
      expect(() => parseShardSize(bad)).toThrow(/--max-shard-size/);
    }
  });

  test('tensors are sharded in LlamaForCausalLM state_dict order', () => {
    const names = new Map(parameterShapes(testConfig()));
    const order = hfTensorOrder([...names.keys()]);
    expect(order.slice(0, 10)).toEqual([
      'model.embed_tokens.weight',
      ...['self_attn.q_proj', 'self_attn.k_proj', 'self_attn.v_proj', 'self_attn.o_proj', 'mlp.gate_proj', 'mlp.up_proj', 'mlp.down_proj', 'input_layernorm', 'post_attention_layernorm'].map(
        (n) => `model.layers.0.${n}.weight`,
      ),
    ]);
    expect(order.slice(-2)).toEqual(['model.norm.weight', 'lm_head.weight']);
    expect(new Set(order)).toEqual(new Set(names.keys()));
  });
});

describe('export-hf / import-hf with shards', () => {
  let dir: string;
  beforeAll(async () => {
    await initBackend('cpu', () => undefined);
    dir = tempDir('hf-shards');
  });

  test('a low limit gives shards plus an index; everything within the limit gives one file; import reads either back exactly', async () => {
    const c = testConfig();
    const model = testModel(c, 5);
    const ckpt = path.join(dir, 'ckpt');
    writeModelCheckpoint(ckpt, c, model.getWeights());
    // Tensors here are 128..6144 bytes: 5000 puts gate/up/down (6144) in shards of their own.
    const sharded = path.join(dir, 'sharded');
    await exportTo(ckpt, sharded, '5KB');
    const index = JSON.parse(fs.readFileSync(path.join(sharded, HF_INDEX_FILE), 'utf8'));
    const shardFiles = fs.readdirSync(sharded).filter((f) => f.endsWith('.safetensors')).sort();
    expect(fs.existsSync(path.join(sharded, 'model.safetensors'))).toBe(false);
    expect(shardFiles.length).toBeGreaterThan(3);
    expect(shardFiles[0]).toBe(`model-00001-of-${String(shardFiles.length).padStart(5, '0')}.safetensors`);
    expect(new Set(Object.values(index.weight_map))).toEqual(new Set(shardFiles));
    const weights = model.getWeights();
    const totalBytes = [...weights.values()].reduce((a, t) => a + 4 * t.data.length, 0);
    expect(index.metadata).toEqual({ total_parameters: totalBytes / 4, total_size: totalBytes });
    for (const f of shardFiles) {
      const st = readSafetensors(path.join(sharded, f));
      const bytes = [...st.tensors.values()].reduce((a, t) => a + 4 * t.data.length, 0);
      // Within the limit unless it is one oversized tensor.
      expect(bytes <= 5000 || st.tensors.size === 1).toBe(true);
      for (const name of st.tensors.keys()) expect(index.weight_map[name]).toBe(f);
    }
    // Keys sorted at every level, indent 2, trailing newline: json.dumps(indent=2, sort_keys=True).
    const text = fs.readFileSync(path.join(sharded, HF_INDEX_FILE), 'utf8');
    expect(text.startsWith('{\n  "metadata": {\n    "total_parameters": ')).toBe(true);
    expect(text.endsWith('}\n')).toBe(true);
    const keys = Object.keys(index.weight_map);
    expect(keys).toEqual([...keys].sort());

    const single = path.join(dir, 'single');
    await exportTo(ckpt, single, String(totalBytes)); // exactly fits: one file, no index
    expect(fs.readdirSync(single).filter((f) => f.includes('safetensors'))).toEqual(['model.safetensors']);

    const ids = randomIds(Rng.from(2, 'shards'), 2, 7, c.vocab_size);
    const want = Array.from(model.logits(ids).dataSync());
    for (const hf of [sharded, single]) {
      const back = path.join(dir, `back-${path.basename(hf)}`);
      importHfCommand.handler({ dir: hf, out: back, $0: 'ndbg', _: [] } as never);
      const { model: m } = loadModelFromCheckpoint(back);
      expect(Array.from(m.logits(ids).dataSync())).toEqual(want);
      m.dispose();
    }
    model.dispose();
  });

  test('a broken index is one clear error naming the index and the shard', async () => {
    const c = testConfig();
    const model = testModel(c, 6);
    const ckpt = path.join(dir, 'ckpt-broken');
    writeModelCheckpoint(ckpt, c, model.getWeights());
    model.dispose();
    const hf = path.join(dir, 'broken');
    await exportTo(ckpt, hf, '5KB');
    const indexFile = path.join(hf, HF_INDEX_FILE);
    const index = JSON.parse(fs.readFileSync(indexFile, 'utf8'));
    const first = Object.values(index.weight_map)[0] as string;
    fs.renameSync(path.join(hf, first), path.join(hf, 'gone.safetensors'));
    expect(() => readHfModel(hf)).toThrow(new RegExp(`shard ${first} is missing`));
    fs.renameSync(path.join(hf, 'gone.safetensors'), path.join(hf, first));
    const wrong = { ...index, weight_map: { ...index.weight_map, 'model.norm.weight': index.weight_map['model.embed_tokens.weight'] } };
    fs.writeFileSync(indexFile, JSON.stringify(wrong));
    expect(() => readHfModel(hf)).toThrow(/weight_map puts model\.norm\.weight in model-00001/);
    fs.writeFileSync(indexFile, JSON.stringify({ weight_map: { 'model.norm.weight': '../x.safetensors' } }));
    expect(() => readHfModel(hf)).toThrow(/weight_map\["model\.norm\.weight"\] must be a shard file name/);
    await expect(exportTo(ckpt, path.join(dir, 'bad-size'), '5 gigs')).rejects.toThrow(/--max-shard-size: "5 gigs" is not a size/);
    expect(fs.existsSync(path.join(dir, 'bad-size'))).toBe(false);
  });

  test.each([['untied', false], ['tied', true]])(
    'round trip with transformers (%s): it loads ndbg shards, writes the same index at the same limit, and ndbg imports its shards',
    async (label, tie) => {
      const peer = peerPython(['torch', 'transformers']);
      if ('skip' in peer) {
        process.stderr.write(`skipped: no transformers peer for the sharded round trip (${peer.skip})\n`);
        return;
      }
      const c = testConfig({ tie_embeddings: tie as boolean });
      const model = testModel(c, 8);
      const ckpt = path.join(dir, `ckpt-peer-${label}`);
      writeModelCheckpoint(ckpt, c, model.getWeights());
      const ours = path.join(dir, `ours-${label}`);
      const limit = 5000;
      await exportTo(ckpt, ours, String(limit));
      const theirs = path.join(dir, `theirs-${label}`);
      const ids = randomIds(Rng.from(3, 'peer'), 2, 6, c.vocab_size);
      const r = spawnSync(peer.python, [path.join(__dirname, 'hf_shards.py'), ours, theirs, String(limit), JSON.stringify(ids.map((x) => Array.from(x)))], {
        encoding: 'utf8',
        maxBuffer: 1 << 26,
      });
      if (r.status !== 0) throw new Error(`hf_shards.py failed:\n${r.stderr}`);
      const got = JSON.parse(r.stdout) as { logits: number[][][]; missing: string[]; unexpected: string[]; files: Record<string, string[]> };
      expect(got.missing).toEqual([]);
      expect(got.unexpected).toEqual([]);
      const want = Array.from(model.logits(ids).dataSync());
      const flat = got.logits.flat(2);
      expect(flat.length).toBe(want.length);
      expect(Math.max(...flat.map((v, i) => Math.abs(v - want[i])))).toBeLessThan(1e-4);
      // A model built in transformers cuts the same shards at the same limit: its index is byte for byte ours.
      const oursIndex = fs.readFileSync(path.join(ours, HF_INDEX_FILE), 'utf8');
      expect(fs.readFileSync(path.join(theirs, 'fresh', HF_INDEX_FILE), 'utf8')).toBe(oursIndex);
      expect(got.files.fresh.filter((f) => f.endsWith('.safetensors'))).toEqual(fs.readdirSync(ours).filter((f) => f.endsWith('.safetensors')).sort());
      // The re-saved loaded model is sharded in name order, differently: ndbg imports both.
      expect(fs.readFileSync(path.join(theirs, 'reloaded', HF_INDEX_FILE), 'utf8')).not.toBe(oursIndex);
      for (const save of ['fresh', 'reloaded']) {
        const back = path.join(dir, `back-peer-${label}-${save}`);
        importHfCommand.handler({ dir: path.join(theirs, save), out: back, $0: 'ndbg', _: [] } as never);
        const { model: m } = loadModelFromCheckpoint(back);
        expect(Array.from(m.logits(ids).dataSync())).toEqual(want);
        m.dispose();
      }
      model.dispose();
    },
    120_000,
  );
});

import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { initBackend } from '../../src/backend/backend';
import { loadModelFromCheckpoint } from '../../src/model/checkpoint';
import { readSafetensors, writeSafetensors } from '../../src/model/safetensors';
import { fromHfConfig, toHfConfig } from '../../src/model/hf';
import { writeModelCheckpoint } from '../../src/model/checkpoint';
import { exportHfCommand } from '../../src/cli/commands/export-hf';
import { importHfCommand } from '../../src/cli/commands/import-hf';
import { UserError } from '../../src/util/errors';
import { Rng } from '../../src/util/rng';
import { peerPython } from '../helpers/peer-python';
import { randomIds, testConfig, testModel } from './helpers';

describe('HF export/import', () => {
  let dir: string;
  beforeAll(async () => {
    await initBackend('cpu', () => undefined);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ndbg-hf-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test.each([
    ['untied GQA', { tie_embeddings: false }],
    ['tied', { tie_embeddings: true }],
  ])('export → import gives identical logits; the HF layout is [out, in] (%s)', async (label, over) => {
    const c = testConfig(over);
    const model = testModel(c, 21);
    // A checkpoint as the trainer writes it: weights + the resolved config with other sections.
    const ckpt = path.join(dir, `ckpt-${label.replace(/\W/g, '')}`);
    fs.mkdirSync(ckpt);
    writeSafetensors(path.join(ckpt, 'model.safetensors'), model.getWeights(), { format: 'pt' });
    fs.writeFileSync(path.join(ckpt, 'config.json'), JSON.stringify({ model: c, train: { steps: 1 } }));
    const hf = path.join(dir, `hf-${label.replace(/\W/g, '')}`);
    await exportHfCommand.handler({ checkpoint: ckpt, out: hf, $0: 'ndbg', _: [] } as never);

    const cfg = JSON.parse(fs.readFileSync(path.join(hf, 'config.json'), 'utf8'));
    expect(cfg).toMatchObject({
      model_type: 'llama',
      hidden_size: 32,
      intermediate_size: 48,
      num_attention_heads: 4,
      num_key_value_heads: c.n_kv_heads,
      num_hidden_layers: 2,
      tie_word_embeddings: c.tie_embeddings,
      hidden_act: 'silu',
    });
    const t = readSafetensors(path.join(hf, 'model.safetensors')).tensors;
    expect(t.get('model.layers.0.self_attn.k_proj.weight')!.shape).toEqual([c.n_kv_heads * 8, 32]);
    expect(t.get('model.layers.1.mlp.down_proj.weight')!.shape).toEqual([32, 48]);
    expect(t.has('lm_head.weight')).toBe(!c.tie_embeddings);
    // Transposed, not just reshaped: HF [o, i] equals ours [i, o].
    const ours = model.getWeights().get('model.layers.0.mlp.up_proj.weight')!;
    const theirs = t.get('model.layers.0.mlp.up_proj.weight')!;
    expect(theirs.data[5 * 32 + 7]).toBe(ours.data[7 * 48 + 5]);

    const back = path.join(dir, `back-${label.replace(/\W/g, '')}`);
    importHfCommand.handler({ dir: hf, out: back, $0: 'ndbg', _: [] } as never);
    const { model: m2 } = loadModelFromCheckpoint(back);
    const ids = randomIds(Rng.from(4, 'hf'), 2, 9, c.vocab_size);
    const a = model.logits(ids).dataSync();
    const b = m2.logits(ids).dataSync();
    expect(Array.from(b)).toEqual(Array.from(a));

    // Independent Python Llama (torch if installed, else numpy) on the exported files.
    const peer = peerPython(['numpy']);
    if ('skip' in peer) process.stderr.write(`skipped: no numpy/torch for the Python parity check (${peer.skip})\n`);
    else {
      const out = execFileSync(peer.python, [path.join(__dirname, 'hf_parity.py'), hf, JSON.stringify(ids.map((r) => Array.from(r)))], { encoding: 'utf8' });
      const { backend, logits } = JSON.parse(out) as { backend: string; logits: number[][][] };
      let maxDiff = 0;
      logits.flat(2).forEach((v, i) => (maxDiff = Math.max(maxDiff, Math.abs(v - a[i]))));
      process.stderr.write(`hf_parity.py (${backend}) ${label}: max |Δlogit| = ${maxDiff.toExponential(2)}\n`);
      expect(maxDiff).toBeLessThanOrEqual(1e-4);
    }
    model.dispose();
    m2.dispose();
  });

  test('bad inputs are UserErrors naming the file', async () => {
    const c = testConfig();
    const ckpt = path.join(dir, 'bad');
    fs.mkdirSync(ckpt);
    fs.writeFileSync(path.join(ckpt, 'config.json'), JSON.stringify({ model: { ...c, d_model: 33 } }));
    await expect(exportHfCommand.handler({ checkpoint: ckpt, out: path.join(dir, 'o1'), $0: '', _: [] } as never)).rejects.toThrow(/model\.d_model|n_heads/);
    fs.writeFileSync(path.join(ckpt, 'config.json'), JSON.stringify({ model: c }));
    const w = testModel(c).getWeights();
    w.delete('model.norm.weight');
    writeSafetensors(path.join(ckpt, 'model.safetensors'), w);
    await expect(exportHfCommand.handler({ checkpoint: ckpt, out: path.join(dir, 'o2'), $0: '', _: [] } as never)).rejects.toThrow(UserError);
    await expect(exportHfCommand.handler({ checkpoint: ckpt, out: path.join(dir, 'o2'), $0: '', _: [] } as never)).rejects.toThrow(/missing tensors model\.norm\.weight/);
    expect(fs.existsSync(path.join(dir, 'o2'))).toBe(false);
    fs.mkdirSync(path.join(dir, 'hfbad'));
    fs.writeFileSync(path.join(dir, 'hfbad', 'config.json'), JSON.stringify({ model_type: 'llama', hidden_act: 'gelu', hidden_size: 32, num_attention_heads: 4 }));
    expect(() => importHfCommand.handler({ dir: path.join(dir, 'hfbad'), out: path.join(dir, 'o3'), $0: '', _: [] } as never)).toThrow(/hidden_act "gelu"/);
  });

  test('import-hf reads transformers-5 rope_parameters and refuses RoPE it does not implement', () => {
    const base = toHfConfig(testConfig());
    const { rope_theta: _t, ...noTheta } = base;
    const v5 = { ...noTheta, rope_parameters: { rope_type: 'default', rope_theta: 500000.0 } };
    expect(fromHfConfig(v5, 'v5.json').rope_theta).toBe(500000);
    expect(fromHfConfig({ ...noTheta, rope_parameters: undefined, rope_theta: 250000 }, 'v4.json').rope_theta).toBe(250000);
    // What export-hf writes is read back by the same rule.
    expect(fromHfConfig(toHfConfig(testConfig({ rope_theta: 1234 })), 'x').rope_theta).toBe(1234);
    expect(() => fromHfConfig({ ...noTheta, rope_parameters: { rope_type: 'llama3', rope_theta: 5e5, factor: 8 } }, 'l3.json')).toThrow(
      /l3\.json: unsupported RoPE settings: rope_parameters\.rope_type "llama3".*rope_parameters fields factor/,
    );
    expect(() => fromHfConfig({ ...noTheta, rope_parameters: { rope_theta: 5e5, partial_rotary_factor: 0.5 } }, 'p.json')).toThrow(/partial_rotary_factor/);
    expect(() => fromHfConfig({ ...noTheta, rope_scaling: { type: 'linear', factor: 2 } }, 's.json')).toThrow(/rope_scaling\.rope_type "linear"/);
    expect(() => fromHfConfig({ ...base, rope_theta: 10000, rope_parameters: { rope_theta: 5e5 } }, 'c.json')).toThrow(/contradicts rope_theta/);
  });

  test('checkpoint weights are marked as ndbg layout; exported weights as HF; each reader refuses the other', async () => {
    const c = testConfig();
    const model = testModel(c, 3);
    const ckpt = path.join(dir, 'marked');
    writeModelCheckpoint(ckpt, c, model.getWeights());
    expect(readSafetensors(path.join(ckpt, 'model.safetensors')).metadata).toEqual({ format: 'ndbg', ndbg_layout: 'linear-in-out' });
    const hf = path.join(dir, 'marked-hf');
    await exportHfCommand.handler({ checkpoint: ckpt, out: hf, $0: 'ndbg', _: [] } as never);
    expect(readSafetensors(path.join(hf, 'model.safetensors')).metadata).toEqual({ format: 'pt' });
    // An ndbg checkpoint handed to import-hf is named for what it is.
    expect(() => importHfCommand.handler({ dir: ckpt, out: path.join(dir, 'o4'), $0: '', _: [] } as never)).toThrow(/ndbg checkpoint config, not a Hugging Face one/);
    expect(() => importHfCommand.handler({ dir: path.join(dir, 'nope'), out: path.join(dir, 'o5'), $0: '', _: [] } as never)).toThrow(/does not exist/);
    model.dispose();
  });
});

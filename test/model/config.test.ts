import * as fs from 'fs';
import * as path from 'path';
import { loadModelConfig, modelStats, parameterShapes, resolveModelConfig } from '../../src/model/config';
import { UserError } from '../../src/util/errors';

const CONFIGS = path.join(__dirname, '..', '..', 'configs');

describe('model configs', () => {
  test('every configs/*.json with a model section validates', () => {
    const files = fs.readdirSync(CONFIGS).filter((f) => f.endsWith('.json'));
    const withModel = files.filter((f) => 'model' in JSON.parse(fs.readFileSync(path.join(CONFIGS, f), 'utf8')));
    expect(withModel).toEqual(expect.arrayContaining(['tiny.json', 'small.json', 'nd-1.8b.json', 'ladder-1.json', 'ladder-4.json']));
    for (const f of withModel) expect(() => loadModelConfig(path.join(CONFIGS, f))).not.toThrow();
  });

  test('parameter count and FLOPs follow the documented formulas', () => {
    const c = resolveModelConfig({ vocab_size: 100, d_model: 16, n_layers: 3, n_heads: 4, n_kv_heads: 2, d_ff: 40, max_seq_len: 32, tie_embeddings: false });
    const per = 16 * 16 + 2 * 16 * 8 + 16 * 16 + 3 * 16 * 40 + 2 * 16; // q, k+v (GQA), o, mlp, norms
    const s = modelStats(c);
    expect(s.params).toBe(2 * 100 * 16 + 3 * per + 16);
    expect(s.matmulParams).toBe(100 * 16 + 3 * (per - 32));
    expect(s.trainFlopsPerToken).toBe(6 * s.matmulParams + 12 * 3 * 16 * 32);
    expect(modelStats(c, 8).forwardFlopsPerToken).toBe(2 * s.matmulParams + 4 * 3 * 16 * 8);
    // nd-1.8b as documented in docs/model.md.
    const big = loadModelConfig(path.join(CONFIGS, 'nd-1.8b.json'));
    expect(modelStats(big).params).toBe(1786626560);
    expect(big.d_model / big.n_heads).toBe(128);
  });

  test('defaults and derived fields', () => {
    const c = resolveModelConfig({ vocab_size: 10, d_model: 128, n_layers: 1, n_heads: 4, max_seq_len: 8 });
    expect(c).toMatchObject({ n_kv_heads: 4, d_ff: 384, tie_embeddings: true, rope_theta: 10000, norm_eps: 1e-5, init_std: 0.02 });
    expect(parameterShapes(c).map(([n]) => n)).not.toContain('lm_head.weight');
  });

  test('bad configs name every bad field; --set overrides apply', () => {
    expect(() => resolveModelConfig({ vocab_size: 0, d_model: 30, n_layers: 1, n_heads: 4, max_seq_len: 8, typo: 1 }, 'x.json')).toThrow(UserError);
    try {
      resolveModelConfig({ vocab_size: 0, d_model: 30, n_layers: 1, n_heads: 4, max_seq_len: 8, typo: 1 }, 'x.json');
    } catch (e) {
      expect((e as Error).message).toMatch(/x\.json/);
      expect((e as Error).message).toMatch(/vocab_size/);
      expect((e as Error).message).toMatch(/typo/);
    }
    expect(() => resolveModelConfig({ vocab_size: 5, d_model: 20, n_layers: 1, n_heads: 4, max_seq_len: 8 })).toThrow(/head dim 5 must be even/);
    expect(() => resolveModelConfig({ vocab_size: 5, d_model: 32, n_layers: 1, n_heads: 4, n_kv_heads: 3, max_seq_len: 8 })).toThrow(/n_kv_heads/);
    expect(loadModelConfig(path.join(CONFIGS, 'tiny.json'), ['model.n_layers=3']).n_layers).toBe(3);
    expect(() => loadModelConfig(path.join(CONFIGS, 'tiny.json'), ['model.n_heads=5'])).toThrow(/n_heads/);
  });
});

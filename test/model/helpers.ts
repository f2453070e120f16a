import { ModelConfig, ModelConfigInput, resolveModelConfig } from '../../src/model/config';
import type { KernelSet } from '../../src/backend/kernel_set';
import { LlamaModel } from '../../src/model/model';
import { Rng } from '../../src/util/rng';

/** A config small enough for float64 reference loops, with GQA (2 query heads per kv head). */
export function testConfig(over: Partial<ModelConfigInput> = {}): ModelConfig {
  return resolveModelConfig({
    vocab_size: 37,
    d_model: 32,
    n_layers: 2,
    n_heads: 4,
    n_kv_heads: 2,
    d_ff: 48,
    max_seq_len: 16,
    init_std: 0.3,
    tie_embeddings: false,
    ...over,
  });
}

/**
 * A model whose weights exercise every path: a large init std so logits are O(1), and RMSNorm
 * weights drawn around 1 rather than all ones (so a missing norm weight would show).
 */
export function testModel(config: ModelConfig, seed = 1, kernels?: KernelSet): LlamaModel {
  const m = LlamaModel.create(config, seed, kernels);
  const w = m.getWeights();
  const rng = Rng.from(seed, 'norms');
  for (const [name, t] of w) if (t.shape.length === 1) for (let i = 0; i < t.data.length; i++) t.data[i] = 0.5 + rng.next();
  m.setWeights(w);
  return m;
}

export function randomIds(rng: Rng, B: number, T: number, V: number): Int32Array[] {
  return Array.from({ length: B }, () => Int32Array.from({ length: T }, () => rng.int(V)));
}

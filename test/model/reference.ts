/**
 * An independent float64 implementation of the Llama forward pass and loss in plain loops, for
 * parity tests. It shares no code with src/model except the config type: RoPE, attention, GQA
 * head mapping, RMSNorm and SwiGLU are written out from the HF Llama definitions.
 * Weights come in the model's layout (linear weights [in, out]).
 */
import type { ModelConfig } from '../../src/model/config';

type W = Map<string, { shape: number[]; data: Float32Array }>;

function linear(x: Float64Array[], w: { shape: number[]; data: Float32Array }): Float64Array[] {
  const [inn, out] = w.shape;
  return x.map((row) => {
    const y = new Float64Array(out);
    for (let i = 0; i < inn; i++) {
      const xi = row[i];
      for (let o = 0; o < out; o++) y[o] += xi * w.data[i * out + o];
    }
    return y;
  });
}

function rms(x: Float64Array[], w: Float32Array, eps: number): Float64Array[] {
  return x.map((row) => {
    let ms = 0;
    for (const v of row) ms += v * v;
    const r = 1 / Math.sqrt(ms / row.length + eps);
    return row.map((v, i) => v * r * w[i]);
  });
}

function rope(v: Float64Array, pos: number, theta: number): Float64Array {
  const hd = v.length;
  const half = hd / 2;
  const out = new Float64Array(hd);
  for (let i = 0; i < half; i++) {
    const ang = pos * Math.pow(theta, (-2 * i) / hd);
    const c = Math.cos(ang);
    const s = Math.sin(ang);
    out[i] = v[i] * c - v[i + half] * s;
    out[i + half] = v[i + half] * c + v[i] * s;
  }
  return out;
}

/** Logits [T][V] for one sequence. docIds (same length) confine attention to a document. */
export function referenceLogits(c: ModelConfig, w: W, ids: ArrayLike<number>, docIds?: ArrayLike<number>): Float64Array[] {
  const T = ids.length;
  const d = c.d_model;
  const hd = d / c.n_heads;
  const g = c.n_heads / c.n_kv_heads;
  const emb = w.get('model.embed_tokens.weight')!;
  let x: Float64Array[] = [];
  for (let t = 0; t < T; t++) x.push(Float64Array.from(emb.data.subarray(ids[t] * d, (ids[t] + 1) * d)));
  for (let l = 0; l < c.n_layers; l++) {
    const p = `model.layers.${l}`;
    const n1 = rms(x, w.get(`${p}.input_layernorm.weight`)!.data, c.norm_eps);
    const q = linear(n1, w.get(`${p}.self_attn.q_proj.weight`)!);
    const k = linear(n1, w.get(`${p}.self_attn.k_proj.weight`)!);
    const v = linear(n1, w.get(`${p}.self_attn.v_proj.weight`)!);
    const attnOut: Float64Array[] = [];
    for (let t = 0; t < T; t++) attnOut.push(new Float64Array(c.n_heads * hd));
    for (let h = 0; h < c.n_heads; h++) {
      const kvh = Math.floor(h / g);
      const qs = q.map((row, t) => rope(row.subarray(h * hd, (h + 1) * hd), t, c.rope_theta));
      const ks = k.map((row, t) => rope(row.subarray(kvh * hd, (kvh + 1) * hd), t, c.rope_theta));
      for (let i = 0; i < T; i++) {
        const scores: number[] = [];
        const allowed: number[] = [];
        for (let j = 0; j <= i; j++) {
          if (docIds && c.doc_attention_mask && docIds[j] !== docIds[i]) continue;
          let s = 0;
          for (let e = 0; e < hd; e++) s += qs[i][e] * ks[j][e];
          scores.push(s / Math.sqrt(hd));
          allowed.push(j);
        }
        const m = Math.max(...scores);
        const ex = scores.map((s) => Math.exp(s - m));
        const z = ex.reduce((a, b) => a + b, 0);
        allowed.forEach((j, n) => {
          for (let e = 0; e < hd; e++) attnOut[i][h * hd + e] += (ex[n] / z) * v[j][kvh * hd + e];
        });
      }
    }
    const o = linear(attnOut, w.get(`${p}.self_attn.o_proj.weight`)!);
    x = x.map((row, t) => row.map((val, i) => val + o[t][i]));
    const n2 = rms(x, w.get(`${p}.post_attention_layernorm.weight`)!.data, c.norm_eps);
    const gate = linear(n2, w.get(`${p}.mlp.gate_proj.weight`)!);
    const up = linear(n2, w.get(`${p}.mlp.up_proj.weight`)!);
    const act = gate.map((row, t) => row.map((gv, i) => (gv / (1 + Math.exp(-gv))) * up[t][i]));
    const down = linear(act, w.get(`${p}.mlp.down_proj.weight`)!);
    x = x.map((row, t) => row.map((val, i) => val + down[t][i]));
  }
  const hN = rms(x, w.get('model.norm.weight')!.data, c.norm_eps);
  const V = c.vocab_size;
  return hN.map((row) => {
    const out = new Float64Array(V);
    for (let vtok = 0; vtok < V; vtok++) {
      let s = 0;
      for (let i = 0; i < d; i++) {
        s += row[i] * (c.tie_embeddings ? emb.data[vtok * d + i] : w.get('lm_head.weight')!.data[i * V + vtok]);
      }
      out[vtok] = s;
    }
    return out;
  });
}

/** Mean cross-entropy over all (weighted) target positions of a batch of [T+1]-token rows. */
export function referenceLoss(c: ModelConfig, w: W, rows: Int32Array[], mask?: Float32Array[], docs?: Int32Array[]): number {
  let total = 0;
  let weight = 0;
  rows.forEach((row, b) => {
    const T = row.length - 1;
    const logits = referenceLogits(c, w, row.subarray(0, T), docs?.[b]?.subarray(0, T));
    for (let t = 0; t < T; t++) {
      const wt = mask ? mask[b][t] : 1;
      const m = Math.max(...logits[t]);
      let z = 0;
      for (const v of logits[t]) z += Math.exp(v - m);
      total += wt * (m + Math.log(z) - logits[t][row[t + 1]]);
      weight += wt;
    }
  });
  return weight > 0 ? total / weight : 0;
}

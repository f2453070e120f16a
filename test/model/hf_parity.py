"""Independent check of an `ndbg export-hf` directory: loads config.json + model.safetensors
(parsed here by hand, no `safetensors` package) into a plain Llama forward written from the
HF LlamaForCausalLM definition (rotate_half RoPE, repeat_kv GQA, RMSNorm, SwiGLU), and prints
the logits for the given token ids as JSON. Uses PyTorch when importable, else numpy.

Usage: python3 hf_parity.py HF_DIR '[[1,2,3],[4,5,6]]'   → {"backend": ..., "logits": [B][T][V]}
"""
import json, math, struct, sys

import numpy as np

try:
    import torch
except Exception:  # numpy fallback keeps the check independent of torch being installed
    torch = None


def read_safetensors(path):
    with open(path, "rb") as f:
        buf = f.read()
    (n,) = struct.unpack("<Q", buf[:8])
    header = json.loads(buf[8 : 8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        assert info["dtype"] == "F32", info["dtype"]
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(buf[8 + n + a : 8 + n + b], dtype="<f4").reshape(info["shape"]).astype(np.float64)
    return out


def forward_numpy(cfg, w, ids):
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    hd = d // H
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    T = len(ids)
    emb = w["model.embed_tokens.weight"]
    x = emb[ids]

    def rms(x, g):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g

    inv = theta ** (-np.arange(0, hd, 2) / hd)
    ang = np.outer(np.arange(T), inv)
    cos = np.concatenate([np.cos(ang)] * 2, -1)
    sin = np.concatenate([np.sin(ang)] * 2, -1)

    def rot(x):  # x [h, T, hd]
        x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
        return x * cos + np.concatenate([-x2, x1], -1) * sin

    mask = np.triu(np.full((T, T), -np.inf), 1)
    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms(x, w[p + "input_layernorm.weight"])
        q = (h @ w[p + "self_attn.q_proj.weight"].T).reshape(T, H, hd).transpose(1, 0, 2)
        k = (h @ w[p + "self_attn.k_proj.weight"].T).reshape(T, Hkv, hd).transpose(1, 0, 2)
        v = (h @ w[p + "self_attn.v_proj.weight"].T).reshape(T, Hkv, hd).transpose(1, 0, 2)
        q, k = rot(q), rot(k)
        k = np.repeat(k, H // Hkv, axis=0)
        v = np.repeat(v, H // Hkv, axis=0)
        s = q @ k.transpose(0, 2, 1) / math.sqrt(hd) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        o = (s @ v).transpose(1, 0, 2).reshape(T, H * hd)
        x = x + o @ w[p + "self_attn.o_proj.weight"].T
        h = rms(x, w[p + "post_attention_layernorm.weight"])
        g = h @ w[p + "mlp.gate_proj.weight"].T
        u = h @ w[p + "mlp.up_proj.weight"].T
        x = x + (g / (1 + np.exp(-g)) * u) @ w[p + "mlp.down_proj.weight"].T
    x = rms(x, w["model.norm.weight"])
    head = emb if cfg.get("tie_word_embeddings") else w["lm_head.weight"]
    return x @ head.T


def forward_torch(cfg, w, ids):
    tw = {k: torch.tensor(v, dtype=torch.float64) for k, v in w.items()}
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    hd = d // H
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    T = len(ids)
    x = tw["model.embed_tokens.weight"][torch.tensor(ids)]
    F = torch.nn.functional

    def rms(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * g

    inv = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    emb = torch.cat([torch.outer(torch.arange(T, dtype=torch.float64), inv)] * 2, -1)
    cos, sin = emb.cos(), emb.sin()

    def rotate_half(x):
        return torch.cat([-x[..., hd // 2 :], x[..., : hd // 2]], -1)

    for i in range(cfg["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms(x, tw[p + "input_layernorm.weight"])
        q = F.linear(h, tw[p + "self_attn.q_proj.weight"]).view(T, H, hd).transpose(0, 1)
        k = F.linear(h, tw[p + "self_attn.k_proj.weight"]).view(T, Hkv, hd).transpose(0, 1)
        v = F.linear(h, tw[p + "self_attn.v_proj.weight"]).view(T, Hkv, hd).transpose(0, 1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(H // Hkv, 0)
        v = v.repeat_interleave(H // Hkv, 0)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True) if hasattr(F, "scaled_dot_product_attention") else None
        if o is None:
            s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
            s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf")).softmax(-1)
            o = s @ v
        x = x + F.linear(o.transpose(0, 1).reshape(T, H * hd), tw[p + "self_attn.o_proj.weight"])
        h = rms(x, tw[p + "post_attention_layernorm.weight"])
        x = x + F.linear(F.silu(F.linear(h, tw[p + "mlp.gate_proj.weight"])) * F.linear(h, tw[p + "mlp.up_proj.weight"]), tw[p + "mlp.down_proj.weight"])
    x = rms(x, tw["model.norm.weight"])
    head = tw["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else tw["lm_head.weight"]
    return (x @ head.T).numpy()


def main():
    hf_dir, ids = sys.argv[1], json.loads(sys.argv[2])
    cfg = json.load(open(f"{hf_dir}/config.json"))
    w = read_safetensors(f"{hf_dir}/model.safetensors")
    fwd = forward_torch if torch is not None else forward_numpy
    logits = [fwd(cfg, w, row).tolist() for row in ids]
    print(json.dumps({"backend": f"torch {torch.__version__}" if torch is not None else f"numpy {np.__version__}", "logits": logits}))


if __name__ == "__main__":
    main()

"""transformers' LlamaForCausalLM with ndbg's document mask and loss (src/model/model.ts).

ndbg's attention lets position i see j <= i only inside i's document (doc ids from the data
rows), with an additive bias of -1e9 elsewhere; transformers accepts a prepared 4D additive
mask [B, 1, T, T] and uses it as given. RoPE positions are not reset at document boundaries
(as in ndbg: RoPE depends only on i - j, so inside a document it makes no difference).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

MASKED = -1e9  # ndbg's bias (src/model/layers.ts MASKED): exp() of it is exactly 0 in float32


def load_model(hf_dir: str, attn_implementation: str = "sdpa"):
    from transformers import LlamaForCausalLM

    model = LlamaForCausalLM.from_pretrained(hf_dir, dtype=torch.float32, attn_implementation=attn_implementation)
    return model


def document_mask(doc_ids: torch.Tensor, dtype=torch.float32) -> torch.Tensor:
    """[B, T] document ids → [B, 1, T, T] additive mask: causal and block-diagonal by document."""
    T = doc_ids.shape[1]
    causal = torch.ones(T, T, dtype=torch.bool, device=doc_ids.device).tril()
    same = doc_ids[:, :, None] == doc_ids[:, None, :]
    allowed = causal[None] & same
    mask = torch.zeros(allowed.shape, dtype=dtype, device=doc_ids.device)
    mask.masked_fill_(~allowed, MASKED)
    return mask[:, None]


def loss_sum(model, ids: torch.Tensor, loss_mask: torch.Tensor, doc_ids: torch.Tensor | None, doc_attention_mask: bool = True):
    """(Σ cross entropy over the targets that count, their number) for rows ids [B, T+1].

    Inputs are ids[:, :T], targets ids[:, 1:], weights loss_mask[:, 1:]; a sum, so micro-batches
    and data-parallel ranks add up and the step divides once by its total target count.
    """
    inputs = ids[:, :-1]
    targets = ids[:, 1:]
    weights = loss_mask[:, 1:].to(torch.float32)
    mask = document_mask(doc_ids[:, :-1]) if (doc_ids is not None and doc_attention_mask) else None
    logits = model(input_ids=inputs, attention_mask=mask, use_cache=False).logits
    per_token = F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1), reduction="none")
    return (per_token * weights.reshape(-1)).sum(), int(weights.sum().item())

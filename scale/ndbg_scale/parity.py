"""The PyTorch side of the exactness test (test/scale/parity.test.ts): the loss of one loader
batch on an exported model, the batch's fingerprint, and LRs of the ported schedules, as JSON.

    python -m ndbg_scale.parity --hf DIR --data D1 [D2 ...] --seed S --batch-size B \
        [--weights '{"a": 2}'] [--shuffle-window W] [--batch-index K] [--schedules FILE]
"""
from __future__ import annotations

import argparse
import hashlib
import json

import numpy as np
import torch

from .data import MixtureLoader
from .model import load_model, loss_sum
from .recipe import lr_at


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--hf", required=True)
    p.add_argument("--data", nargs="+", required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--weights")
    p.add_argument("--shuffle-window", type=int, default=4096)
    p.add_argument("--batch-index", type=int, default=0)
    p.add_argument("--attn", default="sdpa")
    p.add_argument("--schedules", help="JSON file: [{schedule, steps}] → the LR of every step")
    a = p.parse_args()
    torch.set_num_threads(1)
    loader = MixtureLoader(a.data, a.batch_size, a.seed, weights=json.loads(a.weights) if a.weights else None, shuffle_window=a.shuffle_window)
    for _ in range(a.batch_index):
        loader.next()
    b = loader.next()
    digest = lambda x, dt: hashlib.sha256(np.ascontiguousarray(x, dtype=dt).tobytes()).hexdigest()
    out = {
        "ids_sha256": digest(b["ids"], "<i4"),
        "loss_mask_sha256": digest(b["loss_mask"], "u1"),
        "doc_ids_sha256": digest(b["doc_ids"], "<i4"),
        "state": loader.state(),
    }
    model = load_model(a.hf, a.attn)
    ids, mask, docs = (torch.from_numpy(np.ascontiguousarray(b[k])) for k in ("ids", "loss_mask", "doc_ids"))
    with torch.no_grad():
        s, n = loss_sum(model, ids, mask, docs, True)
        c, _ = loss_sum(model, ids, mask, docs, False)
    out.update({"loss": s.item() / n, "loss_causal_only": c.item() / n, "tokens": n})
    if a.schedules:
        with open(a.schedules, encoding="utf-8") as f:
            out["lrs"] = [[lr_at(s["schedule"], i, s["steps"]) for i in range(s["steps"])] for s in json.load(f)]
    print(json.dumps(out))


if __name__ == "__main__":
    main()

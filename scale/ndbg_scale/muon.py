"""ndbg's Muon (src/train/muon.ts) for the PyTorch side: the transformer blocks' matrices take
the orthogonalized Nesterov momentum, every other parameter AdamW, under one LR schedule.

torch.optim.Muon exists (2.9+), but it runs Newton–Schulz in bfloat16, so a run handed over from
ndbg would not take ndbg's next update; this one computes in float32 with ndbg's formulas (the
momentum and Nesterov step, the quintic iteration, Moonlight's s·√max(rows, cols) factor)."""
from __future__ import annotations

import math
import re

import torch

HIDDEN = re.compile(r"^model\.layers\.\d+\.")
NS_COEFFS = (3.4445, -4.775, 2.0315)


def is_hidden_matrix(name: str, shape) -> bool:
    """Matrices of the transformer blocks; embeddings, the output head and norms stay on AdamW."""
    return len(shape) == 2 and bool(HIDDEN.search(name))


def newton_schulz(g: torch.Tensor, steps: int) -> torch.Tensor:
    """The quintic iteration on a matrix, done on its wide orientation (rows ≤ cols)."""
    a, b, c = NS_COEFFS
    tall = g.shape[0] > g.shape[1]
    x = g.t() if tall else g
    x = x / (x.norm() + 1e-7)
    for _ in range(steps):
        gram = x @ x.t()
        x = a * x + (b * gram + c * (gram @ gram)) @ x
    return x.t() if tall else x


class Muon(torch.optim.Optimizer):
    """Muon over parameter groups that carry their own weight_decay (ndbg's decay groups)."""

    def __init__(self, groups, momentum: float, ns_steps: int, update_scale: float):
        super().__init__(groups, {"lr": 0.0, "weight_decay": 0.0, "momentum": momentum, "ns_steps": ns_steps, "update_scale": update_scale})

    def params(self):
        return [p for g in self.param_groups for p in g["params"]]

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            mu, lr, wd = group["momentum"], group["lr"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(p)
                buf = state["momentum_buffer"]
                g = p.grad * (1 - mu)
                buf.mul_(mu).add_(g)
                ortho = newton_schulz(buf * mu + g, group["ns_steps"])
                if wd > 0:
                    p.mul_(1 - lr * wd)
                p.add_(ortho, alpha=-lr * group["update_scale"] * math.sqrt(max(p.shape)))


class Hybrid:
    """AdamW and Muon stepped as one optimizer: the loop sets lr on every group, steps and zeroes both."""

    def __init__(self, adam: torch.optim.Optimizer, muon: Muon):
        self.adam, self.muon = adam, muon

    @property
    def param_groups(self):
        return self.adam.param_groups + self.muon.param_groups

    def step(self):
        self.adam.step()
        self.muon.step()

    def zero_grad(self, set_to_none: bool = True):
        self.adam.zero_grad(set_to_none=set_to_none)
        self.muon.zero_grad(set_to_none=set_to_none)

    def state_dict(self):
        return {"adamw": self.adam.state_dict(), "muon": self.muon.state_dict()}

    def load_state_dict(self, state):
        self.adam.load_state_dict(state["adamw"])
        self.muon.load_state_dict(state["muon"])

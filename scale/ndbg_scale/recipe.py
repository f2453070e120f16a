"""The optimizer recipe of an ndbg run config (src/train/config.ts): defaults, the LR schedule
(src/train/schedule.ts) and the weight-decay rule (src/train/adamw.ts decayRule), so the PyTorch
side trains with exactly the settings the tfjs run used."""
from __future__ import annotations

import math
import re

from .jsonfile import read_json

PAPER_SCHEDULE = {"kind": "cosine", "peak_lr": 1e-3, "warmup_steps": 750, "min_lr": 0.0}
OPTIM_DEFAULTS = {"beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1, "grad_clip": 1.0, "no_decay": ["embed_tokens"], "decay_vectors": False}
TRAIN_DEFAULTS = {"grad_accum": 1, "seed": 0, "checkpoint_every": 0, "keep_last": 2}
MUON_DEFAULTS = {"momentum": 0.95, "ns_steps": 5, "update_scale": 0.2}
DATA_DEFAULTS = {"shuffle_window": 4096, "verify_sha256": True}


class ConfigError(Exception):
    pass


def load_run_config(path: str) -> dict:
    """A run's config.json (a run dir's or a checkpoint's), with ndbg's defaults filled in."""
    cfg = read_json(path, ConfigError, "pass the run's config.json (RUN_DIR/config.json or a checkpoint's)")
    for section in ("model", "data", "train"):
        if not isinstance(cfg.get(section), dict):
            raise ConfigError(f"{path}: no {section!r} section; is this an ndbg run config?")
    for k in ("steps", "micro_batch_size"):
        if not isinstance(cfg["train"].get(k), int):
            raise ConfigError(f"{path}: train.{k} must be an integer")
    if not cfg["data"].get("datasets"):
        raise ConfigError(f"{path}: data.datasets is empty")
    user = cfg.get("optim") or {}
    optim = {**OPTIM_DEFAULTS, **user}
    optim["schedule"] = dict(user.get("schedule") or PAPER_SCHEDULE)
    if optim["schedule"].get("kind") not in ("cosine", "wsd", "constant"):
        raise ConfigError(f"{path}: optim.schedule.kind {optim['schedule'].get('kind')!r} is not cosine, wsd or constant")
    return {**cfg, "optim": optim, "train": {**TRAIN_DEFAULTS, **cfg["train"]}, "data": {**DATA_DEFAULTS, **cfg["data"]}}


def lr_at(s: dict, step: int, total_steps: int) -> float:
    """LR of the update at 0-based step (src/train/schedule.ts, line for line)."""
    warm = s["warmup_steps"]
    if warm > 0 and step < warm:
        return (s["peak_lr"] * (step + 1)) / warm
    kind = s["kind"]
    if kind == "constant":
        return s["peak_lr"]
    if kind == "cosine":
        end = s.get("decay_steps") or total_steps
        span = max(1, end - warm - 1)
        progress = min(1, max(0, (step - warm) / span))
        return s["min_lr"] + 0.5 * (s["peak_lr"] - s["min_lr"]) * (1 + math.cos(math.pi * progress))
    decay_steps = max(1, _js_round(s["decay_fraction"] * total_steps))
    decay_start = total_steps - decay_steps
    if step < decay_start:
        return s["peak_lr"]
    progress = min(1, (step - decay_start + 1) / decay_steps)
    shape = s["decay_shape"]
    f = 1 - progress if shape == "linear" else 1 - math.sqrt(progress) if shape == "sqrt" else 0.5 * (1 + math.cos(math.pi * progress))
    return s["min_lr"] + (s["peak_lr"] - s["min_lr"]) * f


def _js_round(x: float) -> int:
    return math.floor(x + 0.5)  # Math.round (halves up), not Python's banker's rounding


def decays(name: str, shape, optim: dict) -> bool:
    """Whether a parameter (by HF name) gets weight decay: matrices except `no_decay` matches."""
    if not optim["decay_vectors"] and len(shape) < 2:
        return False
    return not any(re.search(p, name) for p in optim["no_decay"])

"""Continue an ndbg run with PyTorch DistributedDataParallel (docs/scale-out.md).

    torchrun --nproc_per_node 2 scale/train.py --hf hf/ --from runs/x/checkpoints/step-00000500 \
        --out runs/x-torch --steps 20000

Every rank builds the same ndbg mixture loader (same seed, restored from the checkpoint's
loader state) and takes its slice of each micro-batch, so the global step sees exactly the rows
the tfjs trainer would have seen. The step is ndbg's (src/train/step.ts): the gradient of the
summed token losses over all ranks and micro-batches, divided once by the step's target count,
global-norm clipped, AdamW with the run config's betas, eps, decay groups and schedule (and
Muon for the blocks' matrices when the config sets optim.muon, scale/ndbg_scale/muon.py). DDP
averages gradients over ranks; multiplying by the world size turns that back into the sum.

Checkpoints (OUT/checkpoints/step-N/) are Hugging Face directories (config.json,
model.safetensors, the tokenizer files of --hf) that `ndbg import-hf` reads, plus this side's
optimizer.pt and scale_state.json for --resume, and COMPLETE written last.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass
from typing import Callable

import torch
import torch.distributed as dist

from .data import DataError, MixtureLoader, crop
from .model import load_model, loss_sum
from .muon import Hybrid, Muon, is_hidden_matrix
from .recipe import MUON_DEFAULTS, ConfigError, decays, load_run_config, lr_at

LINEAR = re.compile(r"(_proj\.weight|^lm_head\.weight)$")
TOKENIZER_FILES = ("tokenizer.model", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "generation_config.json")
STATE_FORMAT = "ndbg-scale-state/1"


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="scale/train.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--hf", required=True, help="an `ndbg export-hf` directory: the weights to start from, and the tokenizer to ship")
    p.add_argument("--from", dest="from_ckpt", help="the ndbg checkpoint that --hf was exported from: continue its step, loader state and optimizer buffers")
    p.add_argument("--config", help="the run config (default: the --from checkpoint's config.json)")
    p.add_argument("--out", required=True, help="run directory for metrics.jsonl and checkpoints/")
    p.add_argument("--steps", type=int, help="total optimizer steps of the run (train.steps; the schedule's length)")
    p.add_argument("--datasets", nargs="+", help="data set directories, replacing data.datasets (paths on this machine)")
    p.add_argument("--checkpoint-every", type=int, help="checkpoint cadence in steps (default train.checkpoint_every; the last step always)")
    p.add_argument("--resume", action="store_true", help="continue from the newest complete checkpoint in --out")
    p.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"], help="transformers attention implementation")
    p.add_argument("--threads", type=int, help="torch CPU threads per process (default: cores / processes)")
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


class Dist:
    """torchrun's environment; one process without it."""

    def __init__(self):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        self.device = torch.device("cpu")
        self.on = self.world > 1
        if torch.cuda.is_available():
            torch.cuda.set_device(self.local_rank)
            self.device = torch.device("cuda", self.local_rank)
        if self.on:
            backend = "nccl" if self.device.type == "cuda" else "gloo"
            dist.init_process_group(backend, timeout=datetime.timedelta(minutes=10))

    def sum(self, values):
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        if self.on:
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t.tolist()

    def barrier(self):
        if self.on:
            dist.barrier()

    def close(self):
        if self.on:
            dist.destroy_process_group()


def fail(msg: str, code: int = 2):
    sys.stderr.write(f"scale/train.py: {msg}\n")
    sys.exit(code)


def read_json(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        fail(f"{path} not found")
    except json.JSONDecodeError as e:
        fail(f"{path}: not valid JSON ({e})")


def complete_checkpoints(out: str):
    d = os.path.join(out, "checkpoints")
    if not os.path.isdir(d):
        return []
    found = []
    for name in os.listdir(d):
        m = re.fullmatch(r"step-(\d{8})", name)
        if m and os.path.exists(os.path.join(d, name, "COMPLETE")):
            found.append((int(m.group(1)), os.path.join(d, name)))
    return sorted(found)


def load_ndbg_moments(ckpt: str, params: dict, optimizer):
    """The optimizer buffers of an ndbg checkpoint (model layout, [in, out] linears): AdamW's
    moments, and Muon's momentum for the matrices that Muon updates."""
    from safetensors import safe_open

    muon_params = set(optimizer.muon.params()) if isinstance(optimizer, Hybrid) else set()
    path = os.path.join(ckpt, "optimizer.safetensors")
    with safe_open(path, framework="pt") as f:
        t = int((f.metadata() or {}).get("t", "0"))
        keys = set(f.keys())

        def moment(key: str, p):
            if key not in keys:
                fail(f"{path} has no moment {key}: was --hf exported from this checkpoint?")
            x = f.get_tensor(key)
            if LINEAR.search(key):
                x = x.t()
            if tuple(x.shape) != tuple(p.shape):
                fail(f"{path}: {key} has shape {list(x.shape)}, the model's parameter has {list(p.shape)}")
            return x.contiguous().to(p.device, torch.float32)

        for name, p in params.items():
            if p in muon_params:
                optimizer.muon.state[p] = {"momentum_buffer": moment(f"m.{name}", p)}
                continue
            adam = optimizer.adam if isinstance(optimizer, Hybrid) else optimizer
            adam.state[p] = {"exp_avg": moment(f"m.{name}", p), "exp_avg_sq": moment(f"v.{name}", p), "step": torch.tensor(float(t))}
    return t


def save_checkpoint(out: str, step: int, model, optimizer, hf_dir: str, scale_state: dict, keep_last: int):
    ckdir = os.path.join(out, "checkpoints")
    final = os.path.join(ckdir, f"step-{step:08d}")
    tmp = os.path.join(ckdir, f".tmp-step-{step}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    model.save_pretrained(tmp, safe_serialization=True)
    cfg_file = os.path.join(tmp, "config.json")
    cfg = read_json(cfg_file)
    # Newer transformers keep rope_theta inside rope_parameters; readers of the classic
    # LlamaConfig layout (ndbg import-hf among them) look for it at the top level.
    rope = cfg.get("rope_parameters") or {}
    if "rope_theta" not in cfg and "rope_theta" in rope:
        cfg["rope_theta"] = rope["rope_theta"]
        with open(cfg_file, "w", encoding="utf-8") as f:
            json.dump(cfg, f, indent=2)
    for name in TOKENIZER_FILES:
        src = os.path.join(hf_dir, name)
        if os.path.exists(src) and not os.path.exists(os.path.join(tmp, name)):
            shutil.copyfile(src, os.path.join(tmp, name))
    torch.save(optimizer.state_dict(), os.path.join(tmp, "optimizer.pt"))
    with open(os.path.join(tmp, "scale_state.json"), "w", encoding="utf-8") as f:
        json.dump(scale_state, f, indent=1)
    files = sorted(os.listdir(tmp))
    with open(os.path.join(tmp, "COMPLETE"), "w", encoding="utf-8") as f:
        json.dump({n: os.path.getsize(os.path.join(tmp, n)) for n in files}, f)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    for s, d in complete_checkpoints(out)[:-keep_last]:
        shutil.rmtree(d, ignore_errors=True)
    return final


@dataclass
class Start:
    """Where the run continues: the step done, the loader state and token count at it, the
    weights' directory, and the --out checkpoint being resumed (None when starting from --hf)."""

    step: int = 0
    loader_state: dict | None = None
    tokens_seen: int = 0
    weights_dir: str = ""
    resume: str | None = None


@dataclass
class Run:
    """What one process trains with, built by main() before the loop."""

    args: argparse.Namespace
    env: Dist
    cfg: dict
    model: torch.nn.Module
    ddp: torch.nn.Module
    params: dict
    optimizer: torch.optim.Optimizer
    loader: MixtureLoader
    seq_len: int
    rows: slice  # this rank's rows of every micro-batch
    log: Callable[[str], None]


def resolve_config(args):
    """The run config (--config, else --from's config.json) with --steps, --datasets and
    --checkpoint-every applied; returns it and the file it came from."""
    try:
        config_file = args.config or (os.path.join(args.from_ckpt, "config.json") if args.from_ckpt else None)
        if not config_file:
            fail("give --config RUN/config.json, or --from an ndbg checkpoint (its config.json is the run's)")
        cfg = load_run_config(config_file)
    except ConfigError as e:
        fail(str(e))
    if args.steps is not None:
        cfg["train"]["steps"] = args.steps
    if args.datasets:
        cfg["data"]["datasets"] = args.datasets
    if args.checkpoint_every is not None:
        cfg["train"]["checkpoint_every"] = args.checkpoint_every
    return cfg, config_file


def configure_processes(args, env: Dist, tr: dict):
    """Checks that every process gets an equal slice of a micro-batch; sets CPU threads and the seed."""
    B = tr["micro_batch_size"]
    if B % env.world:
        fail(f"train.micro_batch_size {B} is not divisible by the {env.world} processes; each takes an equal slice of every micro-batch")
    torch.set_num_threads(args.threads or max(1, (os.cpu_count() or 1) // max(1, int(os.environ.get("LOCAL_WORLD_SIZE", env.world)))))
    torch.manual_seed(tr["seed"])


def find_start(args, steps: int, log) -> Start:
    """The newest complete checkpoint of --out with --resume, else --from's ndbg state, else step 0.

    --resume with no checkpoint yet starts from --hf/--from: a pre-emptible job runs one command line.
    """
    existing = complete_checkpoints(args.out)
    if existing and not args.resume:
        fail(f"{args.out} already holds a run (checkpoints/step-{existing[-1][0]:08d}); pass --resume to continue it, or choose a new --out")
    start = Start(weights_dir=args.hf)
    if args.resume and existing:
        ckpt = existing[-1][1]
        st = read_json(os.path.join(ckpt, "scale_state.json"))
        start = Start(st["step"], st["data_state"], st["tokens_seen"], weights_dir=ckpt, resume=ckpt)
        log(f"resume: {ckpt} (step {start.step})")
    elif args.from_ckpt:
        st = read_json(os.path.join(args.from_ckpt, "state.json"))
        if st.get("format") != "ndbg-train-state/1":
            fail(f"{args.from_ckpt}/state.json: not an ndbg trainer state (format {st.get('format')!r})")
        start = Start(st["step"], st["data_state"], st.get("tokens_seen", 0), weights_dir=args.hf)
    if start.step >= steps:
        fail(f"the run is at step {start.step} already; --steps {steps} leaves nothing to do")
    return start


def load_weights(weights_dir: str, attn: str, env: Dist, cfg: dict, config_file: str):
    """The HF model in weights_dir on this process's device, checked against the run config's vocabulary."""
    if not os.path.isfile(os.path.join(weights_dir, "config.json")):
        fail(f"{weights_dir}: no config.json; --hf takes a directory written by `ndbg export-hf`")
    model = load_model(weights_dir, attn).to(env.device)
    if model.config.vocab_size != cfg["model"]["vocab_size"]:
        fail(f"{weights_dir}: vocab_size {model.config.vocab_size} differs from the run config's model.vocab_size {cfg['model']['vocab_size']} ({config_file})")
    return model


def open_loader(data_cfg: dict, tr: dict, state):
    """ndbg's mixture loader over data.datasets, continued from the loader state."""
    try:
        return MixtureLoader(
            data_cfg["datasets"], tr["micro_batch_size"], tr["seed"], weights=data_cfg.get("weights"), shuffle_window=data_cfg["shuffle_window"],
            verify_sha256=data_cfg["verify_sha256"], state=state,
        )
    except DataError as e:
        fail(str(e))


def make_optimizer(params: dict, optim_cfg: dict, args, start: Start, device):
    """AdamW over ndbg's decay groups (with Muon for the blocks' matrices when optim.muon is set),
    with the buffers of the resumed checkpoint or of --from. Returns it and the ndbg step count t
    the buffers came with (None when not from --from)."""
    muon_cfg = optim_cfg.get("muon")
    groups = {(kind, decay): [] for kind in ("adamw", "muon") for decay in (True, False)}
    for name, p in params.items():
        kind = "muon" if muon_cfg and is_hidden_matrix(name, tuple(p.shape)) else "adamw"
        groups[(kind, decays(name, tuple(p.shape), optim_cfg))].append(p)

    def decay_groups(kind: str):
        return [{"params": groups[(kind, d)], "weight_decay": optim_cfg["weight_decay"] if d else 0.0} for d in (True, False) if groups[(kind, d)]]

    optimizer = torch.optim.AdamW(decay_groups("adamw"), lr=0.0, betas=(optim_cfg["beta1"], optim_cfg["beta2"]), eps=optim_cfg["eps"], foreach=False)
    if muon_cfg:
        muon = {**MUON_DEFAULTS, **muon_cfg}
        optimizer = Hybrid(optimizer, Muon(decay_groups("muon"), muon["momentum"], muon["ns_steps"], muon["update_scale"]))
    ndbg_t = None
    if start.resume:
        optimizer.load_state_dict(torch.load(os.path.join(start.resume, "optimizer.pt"), map_location=device))
    elif args.from_ckpt:
        ndbg_t = load_ndbg_moments(args.from_ckpt, params, optimizer)
    return optimizer, ndbg_t


def trim_metrics(metrics_file: str, start_step: int):
    """Drops the lines past start_step: a process that died after its last checkpoint wrote
    them, and those steps run again."""
    kept = []
    with open(metrics_file, encoding="utf-8") as f:
        for line in f:
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # a line cut off by the kill
            if rec.get("step", 0) <= start_step:
                kept.append(line if line.endswith("\n") else line + "\n")
    with open(metrics_file, "w", encoding="utf-8") as f:
        f.writelines(kept)


def open_metrics(out: str, cfg: dict, start_step: int):
    """Rank 0's side of --out: writes config.json, returns metrics.jsonl open for appending."""
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2)
    metrics_file = os.path.join(out, "metrics.jsonl")
    if os.path.exists(metrics_file):
        trim_metrics(metrics_file, start_step)
    return open(metrics_file, "a", encoding="utf-8")


def accumulate(run: Run):
    """Forward and backward over the step's micro-batches (this rank's rows); DDP syncs on the
    last one. Returns this rank's (summed token loss, target count)."""
    tr, env = run.cfg["train"], run.env
    accum = tr["grad_accum"]
    doc_mask = bool(run.cfg["model"].get("doc_attention_mask", True))
    local_loss, local_tokens = 0.0, 0
    for i in range(accum):
        b = crop(run.loader.next(), run.seq_len)
        ids = torch.from_numpy(b["ids"][run.rows]).to(env.device)
        mask = torch.from_numpy(b["loss_mask"][run.rows]).to(env.device)
        docs = torch.from_numpy(b["doc_ids"][run.rows]).to(env.device)
        sync = contextlib.nullcontext() if (i == accum - 1 or not env.on) else run.ddp.no_sync()
        with sync:
            s, n = loss_sum(run.ddp, ids, mask, docs, doc_mask)
            s.backward()
        local_loss += s.item()
        local_tokens += n
    return local_loss, local_tokens


def update(run: Run, step: int, total_loss: float, total_tokens: float):
    """ndbg's update from the accumulated gradients: scale to the sum over all targets / their
    count, clip the global norm, the optimizer at the schedule's lr; a non-finite step is skipped.
    Returns (loss, lr, grad_norm, skipped)."""
    optim_cfg, steps = run.cfg["optim"], run.cfg["train"]["steps"]
    denom = max(total_tokens, 1)
    grads = [p.grad for p in run.params.values() if p.grad is not None]
    for g in grads:
        g.mul_(run.env.world / denom)  # DDP's mean over ranks → the sum, / the step's targets
    grad_norm = math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))
    loss = total_loss / denom
    lr = lr_at(optim_cfg["schedule"], step, steps)
    skipped = not (math.isfinite(loss) and math.isfinite(grad_norm)) or total_tokens == 0
    if not skipped:
        clip = optim_cfg["grad_clip"]
        if clip > 0 and grad_norm > clip:
            for g in grads:
                g.mul_(clip / (grad_norm + 1e-6))
        for group in run.optimizer.param_groups:
            group["lr"] = lr
        run.optimizer.step()
    run.optimizer.zero_grad(set_to_none=True)
    return loss, lr, grad_norm, skipped


def checkpoint(run: Run, step: int, tokens_seen: int):
    """Rank 0 writes checkpoints/step-N with the loader state; every rank waits for it."""
    if run.env.rank == 0:
        state = {"format": STATE_FORMAT, "step": step, "data_state": run.loader.state(), "tokens_seen": tokens_seen, "run_config": run.cfg}
        where = save_checkpoint(run.args.out, step, run.model, run.optimizer, run.args.hf, state, run.cfg["train"]["keep_last"])
        run.log(f"checkpoint {where}")
    run.env.barrier()


def train_loop(run: Run, start: Start, metrics):
    """Steps start.step+1 .. train.steps: one metrics line each (rank 0), checkpoints every
    train.checkpoint_every steps and at the last."""
    tr, env = run.cfg["train"], run.env
    steps, every = tr["steps"], tr["checkpoint_every"]
    tokens_seen = start.tokens_seen
    started = time.time()
    for step in range(start.step, steps):
        t0 = time.time()
        total_loss, total_tokens = env.sum(list(accumulate(run)))
        loss, lr, grad_norm, skipped = update(run, step, total_loss, total_tokens)
        tokens_seen += int(total_tokens)
        dt = time.time() - t0
        if env.rank == 0:
            rec = {"step": step + 1, "loss": loss, "lr": lr, "grad_norm": grad_norm, "tokens": int(total_tokens), "tokens_per_s": total_tokens / max(dt, 1e-9),
                   "tokens_seen": tokens_seen, "backend": f"torch-{env.device.type}-ddp{env.world}", "step_s": dt, "elapsed_s": time.time() - started}
            if skipped:
                rec["skipped"] = True
            metrics.write(json.dumps(rec) + "\n")
            metrics.flush()
            run.log(f"step {step + 1}/{steps} loss {loss:.4f} lr {lr:.3g} grad_norm {grad_norm:.3f} {rec['tokens_per_s']:.0f} tokens/s")
        if step + 1 == steps or (every and (step + 1) % every == 0):
            checkpoint(run, step + 1, tokens_seen)


def main(argv=None):
    args = parse_args(argv)
    env = Dist()
    log = (lambda s: None) if (args.quiet or env.rank != 0) else (lambda s: sys.stderr.write(s + "\n"))
    cfg, config_file = resolve_config(args)
    tr = cfg["train"]
    configure_processes(args, env, tr)
    start = find_start(args, tr["steps"], log)
    model = load_weights(start.weights_dir, args.attn, env, cfg, config_file)
    loader = open_loader(cfg["data"], tr, start.loader_state)
    seq_len = cfg["data"].get("seq_len") or loader.seq_len
    params = dict(model.named_parameters())
    optimizer, ndbg_t = make_optimizer(params, cfg["optim"], args, start, env.device)
    ddp = torch.nn.parallel.DistributedDataParallel(model) if env.on else model
    B = tr["micro_batch_size"]
    rows = slice(env.rank * B // env.world, (env.rank + 1) * B // env.world)
    run = Run(args, env, cfg, model, ddp, params, optimizer, loader, seq_len, rows, log)

    os.makedirs(args.out, exist_ok=True)
    metrics = open_metrics(args.out, cfg, start.step) if env.rank == 0 else None
    moments = f"from {args.from_ckpt} (t={ndbg_t})" if ndbg_t is not None else "restored" if start.resume else "fresh"
    log(f"scale: {env.world} process(es), {env.device.type}, {'gloo' if env.device.type == 'cpu' else 'nccl'} ; steps {start.step + 1}..{tr['steps']}, "
        f"{B}×{tr['grad_accum']} rows of {seq_len} tokens per step; optimizer buffers {moments}")
    train_loop(run, start, metrics)
    if env.rank == 0:
        metrics.close()
    env.close()


if __name__ == "__main__":
    main()

"""ndbg data sets read with pyarrow, and ndbg's mixture loader (src/data/loader.ts) ported so
that the same seed gives the same batches, row for row, and an ndbg checkpoint's loader state
continues here exactly where the tfjs run stopped (docs/data.md, "How mixing and shuffling work").

A batch is what src/data/batch.ts calls a TokenBatch: ids [B, T+1] (inputs ids[:, :T], targets
ids[:, 1:]), loss_mask [B, T+1] aligned with ids (column 0 always 0), doc_ids [B, T+1] (-1 for
padding; attention never crosses documents).
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from .jsonfile import read_json
from .rng import Rng

MANIFEST_FORMAT = "ndbg-data-v1"
SHARD_FORMAT = "ndbg-shard-v1"


class DataError(Exception):
    """Bad input: the message names the file and what is wrong with it."""


def read_manifest(directory: str) -> dict:
    path = os.path.join(directory, "manifest.json")
    m = read_json(path, DataError, f"is {directory} a data set built by `ndbg data build`?")
    if m.get("format") != MANIFEST_FORMAT:
        raise DataError(f"{path}: format is {m.get('format')!r}, expected {MANIFEST_FORMAT!r}")
    return m


@dataclass
class Source:
    name: str
    directory: str
    manifest_file: str
    manifest: dict
    shards: list  # manifest shard entries of the split
    rows: int
    tokens: int


@dataclass
class OpenedDatasets:
    sources: list
    seq_len: int
    row_len: int
    tokenizer_sha256: str
    vocab_size: int
    fingerprint: str


def open_datasets(dirs: list, split: str = "train") -> OpenedDatasets:
    """The sources of one or more data sets, checked as ndbg checks them (src/data/dataset.ts)."""
    if not dirs:
        raise DataError("no data set given")
    sources = []
    first = None
    for d in dirs:
        m = read_manifest(d)
        mf = os.path.join(d, "manifest.json")
        if first is None:
            first = (m, mf)
        else:
            if m["tokenizer"]["sha256"] != first[0]["tokenizer"]["sha256"]:
                raise DataError(f"{mf} and {first[1]} were built with different tokenizers")
            if m["seqLen"] != first[0]["seqLen"]:
                raise DataError(f"{mf} has seq_len {m['seqLen']}, {first[1]} has {first[0]['seqLen']}")
        for s in m["sources"]:
            if any(o.name == s["name"] for o in sources):
                raise DataError(f'source "{s["name"]}" appears in two data sets ({mf}); names must be unique')
            entries = s[split]["shards"]
            for e in entries:
                f = os.path.join(d, e["file"])
                if not os.path.exists(f):
                    raise DataError(f"shard {f} listed in {mf} is missing")
                size = os.path.getsize(f)
                if size != e["bytes"]:
                    raise DataError(f"shard {f} has {size} bytes, {mf} says {e['bytes']}")
            sources.append(Source(s["name"], d, mf, m, entries, sum(e["rows"] for e in entries), s[split]["tokens"]))
    m = first[0]
    fp = hashlib.sha256()
    fp.update(f"{m['tokenizer']['sha256']}|{m['seqLen']}|{split}".encode())
    for s in sources:
        fp.update(f"|{s.name}:{','.join(e['sha256'] for e in s.shards)}".encode())
    return OpenedDatasets(sources, m["seqLen"], m["rowLen"], m["tokenizer"]["sha256"], m["tokenizer"]["vocabSize"], fp.hexdigest()[:16])


def read_shard(src: Source, index: int, split: str, verify_sha256: bool = True):
    """(ids, loss_mask, doc_ids) of one shard as [rows, T+1] arrays, after ndbg's checks."""
    e = src.shards[index]
    path = os.path.join(src.directory, e["file"])
    with open(path, "rb") as f:
        data = f.read()
    if verify_sha256 and hashlib.sha256(data).hexdigest() != e["sha256"]:
        raise DataError(f"shard {path} is corrupted: its sha256 differs from the one in {src.manifest_file}")
    try:
        table = pa.ipc.open_file(pa.BufferReader(data)).read_all()
    except pa.ArrowInvalid as err:
        raise DataError(f"shard {path} is corrupted: not a readable Arrow IPC file ({err})") from None
    meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    seq_len = src.manifest["seqLen"]
    want = {"ndbg.format": SHARD_FORMAT, "ndbg.seq_len": str(seq_len), "ndbg.source": src.name, "ndbg.split": split}
    for k, v in want.items():
        if meta.get(k) != v:
            raise DataError(f"shard {path} does not match {src.manifest_file}: {k} is {meta.get(k)!r}, expected {v!r}")
    if table.num_rows != e["rows"]:
        raise DataError(f"shard {path} does not match {src.manifest_file}: {table.num_rows} rows, the manifest says {e['rows']}")
    row_len = seq_len + 1

    def column(name):
        col = table.column(name).combine_chunks()
        return col.flatten().to_numpy(zero_copy_only=False).reshape(table.num_rows, row_len)

    return column("tokens"), column("loss_mask"), column("doc_ids")


@dataclass
class _SourceStream:
    src: Source
    seed: int
    window: int
    verify: bool
    taken: int = 0
    _order_epoch: int = -1
    _order: list = field(default_factory=list)
    _starts: list = field(default_factory=list)
    _loaded: int = -1
    _shard: tuple = None
    _window_key: tuple = None
    _perm: list = None

    def _set_epoch(self, epoch: int):
        order = list(range(len(self.src.shards)))
        Rng.from_keys(self.seed, "shards", self.src.name, epoch).shuffle(order)
        self._order = order
        self._starts = []
        acc = 0
        for i in order:
            self._starts.append(acc)
            acc += self.src.shards[i]["rows"]
        self._order_epoch = epoch

    def take_row(self):
        n = self.src.rows
        epoch, pos = divmod(self.taken, n)
        if epoch != self._order_epoch:
            self._set_epoch(epoch)
        # upper bound - 1, then past empty shards (as the TypeScript loader does)
        k = 0
        lo, hi = 0, len(self._starts)
        while lo < hi:
            mid = (lo + hi) // 2
            if self._starts[mid] <= pos:
                lo = mid + 1
            else:
                hi = mid
        k = lo - 1
        while self.src.shards[self._order[k]]["rows"] == 0:
            k += 1
        shard_idx = self._order[k]
        offset = pos - self._starts[k]
        if shard_idx != self._loaded:
            self._shard = None
            self._shard = read_shard(self.src, shard_idx, "train", self.verify)
            self._loaded = shard_idx
        ids, mask, docs = self._shard
        w = offset // self.window
        key = (epoch, shard_idx, w)
        if key != self._window_key:
            lo = w * self.window
            size = min(self.window, ids.shape[0] - lo)
            perm = list(range(size))
            Rng.from_keys(self.seed, "rows", self.src.name, epoch, shard_idx, w).shuffle(perm)
            self._perm = perm
            self._window_key = key
        row = w * self.window + self._perm[offset - w * self.window]
        self.taken += 1
        return ids[row], mask[row], docs[row]


class MixtureLoader:
    """ndbg's MixtureLoader: Megatron-style blending by weight, windowed shuffles, a tiny state."""

    def __init__(self, datasets, batch_size, seed, weights=None, shuffle_window=4096, verify_sha256=True, state=None, tokenizer_sha256=None):
        self.datasets = open_datasets(list(datasets), "train")
        ds = self.datasets
        if tokenizer_sha256 and ds.tokenizer_sha256 != tokenizer_sha256:
            raise DataError(f"{ds.sources[0].manifest_file} was built with tokenizer sha256 {ds.tokenizer_sha256[:12]}…, not the expected {tokenizer_sha256[:12]}…")
        self.batch_size = batch_size
        self.seed = seed
        self.shuffle_window = shuffle_window
        self.row_len = ds.row_len
        self.seq_len = ds.seq_len
        raw = dict(weights) if weights is not None else {s.name: s.tokens for s in ds.sources}
        for name, w in raw.items():
            if not any(s.name == name for s in ds.sources):
                raise DataError(f'weights: no source "{name}" in {", ".join(datasets)} (have: {", ".join(s.name for s in ds.sources)})')
            if not (w >= 0):
                raise DataError(f"weights.{name}: must be a non-negative number, got {w}")
        chosen = [s for s in ds.sources if raw.get(s.name, 0) > 0]
        if not chosen:
            raise DataError("weights: at least one source needs a positive weight")
        for s in chosen:
            if s.rows == 0:
                raise DataError(f"source {s.name} ({s.manifest_file}) has no training rows but weight {raw[s.name]}")
        total = 0.0
        for s in chosen:
            total += raw[s.name]
        self.source_names = [s.name for s in chosen]
        self.weights = [raw[s.name] / total for s in chosen]
        self.streams = [_SourceStream(s, seed, shuffle_window, verify_sha256) for s in chosen]
        self.step = 0
        if state is not None:
            self.restore(state)

    def state(self) -> dict:
        return {
            "version": 1,
            "fingerprint": self.datasets.fingerprint,
            "seed": self.seed,
            "batchSize": self.batch_size,
            "shuffleWindow": self.shuffle_window,
            "weights": {n: w for n, w in zip(self.source_names, self.weights)},
            "step": self.step,
            "sources": {s.src.name: {"taken": s.taken, "epoch": s.taken // s.src.rows, "position": s.taken % s.src.rows} for s in self.streams},
        }

    def restore(self, state: dict):
        cur = self.state()

        def bad(what, got, want):
            return DataError(f"loader state does not fit this loader: {what} is {json.dumps(got)} in the state, {json.dumps(want)} here")

        if not state or state.get("version") != 1:
            raise bad("version", (state or {}).get("version"), 1)
        for k, what in (("fingerprint", "data set fingerprint"), ("seed", "seed"), ("batchSize", "batchSize"), ("shuffleWindow", "shuffleWindow")):
            if state.get(k) != cur[k]:
                raise bad(what, state.get(k), cur[k])
        for name in set(state.get("weights", {})) | set(self.source_names):
            if abs(state.get("weights", {}).get(name, 0) - cur["weights"].get(name, 0)) > 1e-12:
                raise bad(f"weights.{name}", state.get("weights", {}).get(name), cur["weights"].get(name))
        rows = 0
        for s in self.streams:
            taken = state.get("sources", {}).get(s.src.name, {}).get("taken")
            if not isinstance(taken, int) or taken < 0:
                raise bad(f"sources.{s.src.name}.taken", taken, "a non-negative integer")
            s.taken = taken
            rows += taken
        if rows != state["step"] * state["batchSize"]:
            raise bad("rows taken in total", rows, state["step"] * state["batchSize"])
        self.step = state["step"]

    def _pick(self) -> int:
        rows = sum(s.taken for s in self.streams)
        best, best_gap = 0, -float("inf")
        for i, s in enumerate(self.streams):
            gap = self.weights[i] * (rows + 1) - s.taken
            if gap > best_gap:
                best, best_gap = i, gap
        return best

    def next(self) -> dict:
        B, L = self.batch_size, self.row_len
        ids = np.empty((B, L), dtype=np.int64)
        mask = np.empty((B, L), dtype=np.uint8)
        docs = np.empty((B, L), dtype=np.int32)
        sources = np.empty(B, dtype=np.uint8)
        for b in range(B):
            s = self._pick()
            sources[b] = s
            ids[b], mask[b], docs[b] = self.streams[s].take_row()
        mask[:, 0] = 0  # nothing in the row predicts its first token (src/data/batch.ts)
        batch = {"step": self.step, "ids": ids, "loss_mask": mask, "doc_ids": docs, "sources": sources}
        self.step += 1
        return batch


def crop(batch: dict, seq_len: int) -> dict:
    """The first seq_len+1 tokens of every row (a run config's data.seq_len below the data's)."""
    if batch["ids"].shape[1] == seq_len + 1:
        return batch
    return {**batch, **{k: batch[k][:, : seq_len + 1] for k in ("ids", "loss_mask", "doc_ids")}}

#!/usr/bin/env bash
# End-to-end check of the GPU backend, for a machine with an NVIDIA GPU (run from the repo root):
#   bash bench/gpu-check.sh [--from WHEEL_OR_DIR]
# 0. says what is there: the GPU (nvidia-smi) and whether the project's .venv has a CUDA PyTorch;
# 1. builds ndbg, then stops with exit 2 if there is no NVIDIA device (every later step needs one;
#    nothing here is a PASS or FAIL on a CPU-only machine);
# 2. builds tfjs-node-gpu against a CUDA 12 TensorFlow (`ndbg backend install --gpu`, extra
#    arguments are passed on), 3. checks that `auto` picks tensorflow-gpu, 4. trains the test
#    fixture 30 steps on tensorflow-gpu and on wasm and compares the losses (GPU kernels sum in
#    other orders than the CPU's: ≤ 1e-3 here, not the CPU backends' 1e-4), 5. measures train
#    throughput on the quickstart and small shapes beside CUDA PyTorch (bench/torch_ref_train.py
#    --device cuda: eager, SDPA, torch.compile) when the .venv has one; a CPU PyTorch is no peer
#    for a GPU run, so without one the bench runs ndbg alone and says so. TORCH_PYTHON=PATH names
#    another Python for the peer (default .venv/bin/python).
# Prints PASS/FAIL per check; exit 1 on a FAIL, 2 when there is no GPU to check.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi; }

if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
else
  echo "no nvidia-smi on PATH"
fi

# The peer: the .venv's torch if it sees a GPU. One line either way, so a log says which it was.
torch_py=${TORCH_PYTHON:-.venv/bin/python}
cuda_torch_line() {
  [ -x "$torch_py" ] || { echo "skipped: no CUDA PyTorch ($torch_py not found)"; return 1; }
  "$torch_py" -c '
import torch
if torch.cuda.is_available():
    print(f"CUDA PyTorch: torch {torch.__version__}, CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}")
else:
    build = f"CUDA {torch.version.cuda} build, no usable GPU" if torch.version.cuda else "CPU build"
    print(f"skipped: no CUDA PyTorch (torch {torch.__version__}, {build})")
    raise SystemExit(3)' 2>/dev/null || { [ $? = 3 ] || echo "skipped: no CUDA PyTorch (no torch importable from $torch_py)"; return 1; }
}
if cuda_torch_line; then cuda_torch=1; else cuda_torch=0; fi

npm run build >/dev/null || { echo "FAIL npm run build"; exit 1; }

if [ ! -e /dev/nvidiactl ] && [ ! -e /dev/nvidia0 ]; then
  echo "stop: no NVIDIA device (/dev/nvidiactl and /dev/nvidia0 absent); the remaining checks (backend install --gpu,"
  echo "      auto picks tensorflow-gpu, 30-step GPU loss parity, GPU throughput) need one and were not run"
  exit 2
fi

check "backend install --gpu" "node bin/ndbg.js backend install --gpu $*"
check "auto picks tensorflow-gpu" "node bin/ndbg.js backend info | grep -q '^backend: tensorflow-gpu'"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
node bin/ndbg.js data build --source "code=test/fixtures/train/corpus.jsonl:code" --tokenizer byte --seq-len 32 \
  --val-fraction 0.05 --workers 0 --quiet --out "$tmp/data"
for b in wasm tensorflow-gpu; do
  node bin/ndbg.js train --config test/fixtures/train/tiny-run.json --set "data.datasets=[\"$tmp/data\"]" \
    --set train.checkpoint_every=0 --steps 30 --backend "$b" --out "$tmp/run-$b" --quiet
done
check "30-step losses tensorflow-gpu vs wasm ≤ 1e-3" "node -e '
const fs = require(\"fs\");
const l = (b) => fs.readFileSync(process.argv[1] + \"/run-\" + b + \"/metrics.jsonl\", \"utf8\").trim().split(\"\n\").map((x) => JSON.parse(x).loss);
const a = l(\"wasm\"), g = l(\"tensorflow-gpu\");
const d = Math.max(...a.map((x, i) => Math.abs(x - g[i])));
console.log(\"max |Δloss| =\", d);
process.exit(a.length === 30 && g.length === 30 && d <= 1e-3 ? 0 : 1);' '$tmp'"

# Threads do not matter to a CUDA peer: one count, so each mode runs once per shape.
if [ "$cuda_torch" = 1 ]; then
  peers="--torch=none --torch-python=$torch_py --torch-device=cuda --torch-threads=2"
else
  peers="--torch=none"
  echo "throughput: ndbg/tensorflow-gpu alone (no CUDA PyTorch to compare with; see the skipped line above)"
fi
check "throughput bench" "npm run bench -- model --backends=tensorflow-gpu --shapes=quickstart,small $peers"
exit $fail

#!/usr/bin/env bash
# End-to-end check of the GPU backend, for a machine with an NVIDIA GPU (run from the repo root):
#   bash bench/gpu-check.sh [--from WHEEL_OR_DIR]
# 1. builds tfjs-node-gpu against a CUDA 12 TensorFlow (`ndbg backend install --gpu`, extra
#    arguments are passed on), 2. checks that `auto` picks tensorflow-gpu, 3. trains the test
#    fixture 30 steps on tensorflow-gpu and on wasm and compares the losses (GPU kernels sum in
#    other orders than the CPU's: ≤ 1e-3 here, not the CPU backends' 1e-4), 4. measures train
#    throughput on the quickstart and small shapes. Prints PASS/FAIL per check; exit 1 on a FAIL.
set -uo pipefail
cd "$(dirname "$0")/.."
fail=0
check() { if eval "$2"; then echo "PASS $1"; else echo "FAIL $1"; fail=1; fi; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
npm run build >/dev/null
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
check "throughput bench" "npm run bench -- model --backends=tensorflow-gpu --shapes=quickstart,small --torch=venv"
exit $fail

#!/usr/bin/env bash
# The quickstart config's training losses for N steps on each backend, for before/after
# comparisons of a refactor (issue: "behaviour unchanged"): run it in two checkouts on the same
# data set and compare the JSON files with bench/loss-parity-compare.js.
#   bash bench/loss-parity.sh DATA_DIR OUT.json [STEPS] [BACKENDS] [--set K=V ...]
# The pure-JS cpu backend needs minutes per step at the quickstart shape: compare it on a shorter
# row (e.g. --set data.seq_len=32).
set -euo pipefail
data="$1"; out="$2"; steps="${3:-30}"; backends="${4:-cpu wasm tensorflow}"
shift $(( $# < 4 ? $# : 4 ))
extra=("$@")
root="${NDBG_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}"
tmp="$(mktemp -d)"
echo "{" > "$out.tmp"
first=1
for b in $backends; do
  node "$root/bin/ndbg.js" train --config "$root/configs/quickstart.json" --set "data.datasets=[\"$data\"]" \
    --set train.checkpoint_every=100000 --set train.eval_every=100000 --set optim.schedule.warmup_steps=5 \
    ${extra[@]+"${extra[@]}"} --steps "$steps" --backend "$b" --out "$tmp/$b" --quiet >&2
  losses="$(node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").trim().split("\n").map(JSON.parse).filter(r=>r.loss!==undefined&&r.step!==undefined).map(r=>r.loss);console.log(JSON.stringify(l))' "$tmp/$b/metrics.jsonl")"
  [ $first = 1 ] || echo "," >> "$out.tmp"; first=0
  echo "\"$b\": $losses" >> "$out.tmp"
done
echo "}" >> "$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$tmp"
echo "wrote $out" >&2

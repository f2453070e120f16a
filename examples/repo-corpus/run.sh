#!/usr/bin/env bash
# Repository-level traces end to end (docs/trace.md, docs/ndl.md, docs/data.md "Repository-level
# documents"): function-level and repository-level documents in one mixture, a small model
# trained on it, next-state accuracy on held-out programs and held-out repositories apart.
#   OUT=/tmp/ndbg-repo STEPS=300 examples/repo-corpus/run.sh
set -euo pipefail
OUT=${OUT:-/tmp/ndbg-repo}
STEPS=${STEPS:-300}
SEQ=${SEQ:-511}            # rows of SEQ+1 tokens; the SRC budget is half of it
TOK=${TOK:-tokenizer/ndbg-2k.model}
ndbg() { nice -n 19 node bin/ndbg.js "$@"; }
mkdir -p "$OUT"

# Function-level: generated programs, split by program.
ndbg programs generate --config configs/programs-quickstart.json -n 500 --seed 0 --out "$OUT/programs.jsonl" --quiet
ndbg programs split --in "$OUT/programs.jsonl" --out-dir "$OUT/split" --fractions 0.9,0,0.1
ndbg trace --input "$OUT/split/train.jsonl" --out "$OUT/fn_traces.jsonl" --quiet
ndbg ndl --traces "$OUT/fn_traces.jsonl" --out "$OUT/fn_docs.jsonl" --per-program 2 --seq-len "$SEQ" --tokenizer "$TOK" --overwrite --quiet

# Repository-level: 24 standard-library modules, held out by repository.
ndbg trace-repo --corpus examples/repo-corpus/stdlib.json --max-entries 8 --out "$OUT/repo_traces.jsonl" --quiet
ndbg ndl scope --traces "$OUT/repo_traces.jsonl" --out "$OUT/scoped_train.jsonl" --holdout-out "$OUT/scoped_heldout.jsonl" \
  --holdout 0.2 --set perTrace=4 --seq-len "$SEQ" --tokenizer "$TOK"
ndbg oracle check --trace "$OUT/scoped_train.jsonl" --scripts 10 --count --quiet --report "$OUT/pdb_check.json" > "$OUT/pdb_check.txt" || true
ndbg ndl --traces "$OUT/scoped_train.jsonl" --out "$OUT/repo_docs.jsonl" --per-program 4 --seq-len "$SEQ" --tokenizer "$TOK" --overwrite --quiet

# One data set, two sources; equal weight as in the paper.
ndbg data build --source fn="$OUT/fn_docs.jsonl":ndl --source repo="$OUT/repo_docs.jsonl":ndl --out "$OUT/data" \
  --tokenizer "$TOK" --seq-len "$SEQ" --force --quiet
ndbg train --config configs/quickstart.json --out "$OUT/run" --steps "$STEPS" --quiet \
  --set "model.max_seq_len=$((SEQ + 1))" --set "data.datasets=[\"$OUT/data\"]" --set 'data.weights={"fn":1,"repo":1}' \
  --set train.checkpoint_every="$STEPS" --set train.eval_every=100
CK=$(ls -d "$OUT"/run/checkpoints/step-* | sort | tail -1)
ndbg eval next-state --checkpoint "$CK" --programs "$OUT/split/test.jsonl" --repo-traces "$OUT/scoped_heldout.jsonl" \
  --per-program 1 --out "$OUT/eval" --quiet

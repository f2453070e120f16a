#!/usr/bin/env bash
# One task of an array job: trace this task's shard of the programs, sample its NDL documents
# and build its data set, with the shard number in every name:
#   WORK/traces-0000I.jsonl  WORK/docs-0000I.jsonl  WORK/data-0000I/
# The shard comes from the scheduler (`ndbg shard`): a Slurm array (--array=0-(N-1)) or a
# Kubernetes Indexed Job (JOB_COMPLETION_INDEX, with NDBG_SHARD_COUNT=N in the pod spec).
# When every task is done, one job merges the parts (docs/scale-out.md):
#   ndbg data merge WORK/data-* --out DATA
# A task that is killed can simply be run again: tracing skips the programs already written.
#
# usage: shard-task.sh PROGRAMS.jsonl WORK [more `ndbg data build` options]
# env:   NDBG (default "npx ndbg"), TOKENIZER, SEQ_LEN (1024), PER_PROGRAM (8), NDL_SEED (0),
#        WORKERS (sandbox workers, 1)
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 PROGRAMS.jsonl WORK [ndbg data build options]" >&2
  exit 2
fi
programs=$1
work=$2
shift 2
ndbg=${NDBG:-npx ndbg}
shard=$($ndbg shard)
read -r index count <<<"$shard"
part=$(printf '%05d' "$index")
mkdir -p "$work"
echo "shard-task: shard $index/$count → $work/{traces,docs,data}-$part" >&2
$ndbg trace --input "$programs" --shard "$index/$count" --out "$work/traces-$part.jsonl" --workers "${WORKERS:-1}" --quiet
$ndbg ndl --traces "$work/traces-$part.jsonl" --out "$work/docs-$part.jsonl" --seed "${NDL_SEED:-0}" \
  --per-program "${PER_PROGRAM:-8}" --overwrite --quiet
$ndbg data build --source "ndl=$work/docs-$part.jsonl:ndl" --seq-len "${SEQ_LEN:-1024}" --out "$work/data-$part" \
  --force --quiet ${TOKENIZER:+--tokenizer "$TOKENIZER"} "$@"

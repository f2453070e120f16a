#!/usr/bin/env bash
# Runs a command as if on a slower machine: inside a CPU cgroup whose CFS quota lets the command
# and its children use at most CPUS processors' worth of time per 100 ms period. Issue 33's
# reference machine is "2 cores whose AdamW step trains 8k tokens/s"; a faster machine measures
# that machine's wall time here instead of scaling its own stage by stage (docs/eval.md,
# "Session 37"). Needs root and a writable cpu controller (cgroup v2's cpu.max or v1's
# cpu.cfs_quota_us), as in a container run as root or a VM.
#
#   bash bench/slow-machine.sh --cpus 0.9 -- npx ndbg quickstart
#
# Calibrate CPUS first: the quota that makes `ndbg train` with AdamW on the quickstart's shape
# train the tokens/s you want (docs/eval.md, "Session 37", gives the recipe and this Intel
# Xeon's figure: 0.9 CPUs for about 8k tokens/s). The quota caps throughput, not the kind of
# core: memory bandwidth, caches and the instruction set stay the host's.
# Exit status: the command's; 2 when the cgroup cannot be made (nothing is run then).
set -uo pipefail

usage() { echo "usage: bash bench/slow-machine.sh --cpus F -- COMMAND [ARG...]" >&2; exit 2; }
cpus=""
while [ $# -gt 0 ]; do
  case "$1" in
    --cpus) cpus="${2:-}"; shift 2 || usage ;;
    --) shift; break ;;
    *) usage ;;
  esac
done
[ $# -gt 0 ] || usage
if ! [[ "$cpus" =~ ^[0-9]*\.?[0-9]+$ ]] || ! awk -v c="$cpus" 'BEGIN { exit !(c >= 0.01) }'; then
  echo "slow-machine: --cpus must be a number ≥ 0.01 (got '${cpus}')" >&2; exit 2
fi
period=100000
quota=$(awk -v c="$cpus" -v p="$period" 'BEGIN { printf "%d", c * p }')

name="ndbg-slow-$$"
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  # cgroup v2: the cpu controller must be enabled for the children of the root.
  group="/sys/fs/cgroup/$name"
  grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
  limit() { echo "$quota $period" > "$group/cpu.max"; }
elif [ -d /sys/fs/cgroup/cpu ]; then
  group="/sys/fs/cgroup/cpu/$name"
  limit() { echo "$period" > "$group/cpu.cfs_period_us" && echo "$quota" > "$group/cpu.cfs_quota_us"; }
else
  echo "slow-machine: no cgroup cpu controller under /sys/fs/cgroup; nothing was run" >&2; exit 2
fi
if ! mkdir "$group" 2>/dev/null || ! limit 2>/dev/null; then
  rmdir "$group" 2>/dev/null
  echo "slow-machine: cannot make a CPU-limited cgroup at $group (needs root and a writable cpu controller); nothing was run" >&2
  exit 2
fi
echo "slow-machine: ${cpus} CPUs (quota ${quota} µs per ${period} µs) of $(nproc) for: $*" >&2

# The command runs in the cgroup; this shell stays outside so that it can remove the group after.
bash -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' slow-machine "$group" "$@" &
child=$!
trap 'kill -TERM "$child" 2>/dev/null' INT TERM
wait "$child"; status=$?
# A signal interrupts the first wait; wait again for the command to finish its own cleanup.
while kill -0 "$child" 2>/dev/null; do wait "$child"; status=$?; done
# Processes the command left behind (a worker pool's children) may still be exiting: give them 5 s.
for _ in $(seq 50); do [ -n "$(cat "$group/cgroup.procs" 2>/dev/null)" ] || break; sleep 0.1; done
rmdir "$group" 2>/dev/null || echo "slow-machine: left $group (a process of the command is still in it)" >&2
exit "$status"

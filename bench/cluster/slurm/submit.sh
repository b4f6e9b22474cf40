#!/usr/bin/env bash
# Submits a sharded lwbench sweep to Slurm in one command: an array of N shards
# (shards.sbatch) and its merge job (merge.sbatch, --dependency=afterok on the array,
# --kill-on-invalid-dep=yes), and prints both job ids.
#
# Usage: bench/cluster/slurm/submit.sh --lwbench BIN --dir RUN_DIR --shards N
#          [--cpus-per-task C] [--sbatch OPTION]... -- SWEEP-ARGS...
#   BIN      the lwbench binary (for --engine sim the --cfg lwsim build), on a shared file system
#   RUN_DIR  the run's directory on a shared file system: shard-K/, merged/, slurm-*.out
#   N        the number of shards (array tasks 0..N-1)
#   C        CPUs per shard: simulations side by side (--jobs C) [default 1; the real engine
#            measures one trial at a time, keep 1 there]
#   --sbatch OPTION  passed to both sbatch calls (e.g. --sbatch --partition=short); sbatch's own
#            SBATCH_* environment variables work as well
# Output, one line each: `shards JOBID`, `merge JOBID`, `out RUN_DIR/merged`.
# Exit status: 0 submitted; 2 bad arguments; otherwise sbatch's failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
usage() { echo "usage: $0 --lwbench BIN --dir RUN_DIR --shards N [--cpus-per-task C] [--sbatch OPTION]... -- SWEEP-ARGS..." >&2; exit 2; }
bad() { echo "$0: invalid value for $1: $2" >&2; exit 2; }
bin="" dir="" n="" cpus=1 extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --lwbench) [ $# -ge 2 ] || usage; bin=$2; shift 2 ;;
    --dir) [ $# -ge 2 ] || usage; dir=$2; shift 2 ;;
    --shards) [ $# -ge 2 ] || usage; n=$2; shift 2 ;;
    --cpus-per-task) [ $# -ge 2 ] || usage; cpus=$2; shift 2 ;;
    --sbatch) [ $# -ge 2 ] || usage; extra+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "$0: unexpected argument '$1'" >&2; usage ;;
  esac
done
[ -n "$bin" ] && [ -n "$dir" ] && [ -n "$n" ] || usage
[ -x "$bin" ] || bad --lwbench "$bin (not an executable file)"
[[ "$n" =~ ^[1-9][0-9]*$ ]] || bad --shards "$n (a whole number from 1)"
[[ "$cpus" =~ ^[1-9][0-9]*$ ]] || bad --cpus-per-task "$cpus (a whole number from 1)"
command -v sbatch >/dev/null || { echo "$0: sbatch not found (is this a Slurm submit host?)" >&2; exit 2; }
mkdir -p "$dir"
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
dir=$(cd "$dir" && pwd)
env="ALL,LWBENCH=$bin,LWLAB_DIR=$dir,LWLAB_SHARDS=$n"
array=$(sbatch --parsable "${extra[@]}" --array="0-$((n - 1))" --cpus-per-task="$cpus" \
  --export="$env" --output="$dir/slurm-%A_%a.out" "$here/shards.sbatch" "$@")
array=${array%%;*}
merge=$(sbatch --parsable "${extra[@]}" --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --export="$env" --output="$dir/slurm-%j-merge.out" "$here/merge.sbatch")
merge=${merge%%;*}
echo "shards $array"
echo "merge $merge"
echo "out $dir/merged"

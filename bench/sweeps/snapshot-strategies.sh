#!/usr/bin/env bash
# The snapshot-strategy sweep of docs/results.md: every proc-array layout x snapshot strategy on the
# atomic LWLock (and the Leader FlexLock where transactions end), over threads, proc-array sizes
# and write percentages. Writes one lwbench output directory per (procs, write-pct) under OUT and
# a combined points.csv.
#
# Usage: bench/sweeps/snapshot-strategies.sh [OUT]   (default: results/snapshot-strategies)
# Takes about 8 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-results/snapshot-strategies}
threads=${THREADS:-1,2,8,64}
duration=${DURATION:-150ms}
trials=${TRIALS:-3}
cargo build --release -q -p bench
mkdir -p "$out"
combined="$out/points.csv"
rm -f "$combined"
for procs in 64 256 1024; do
  for wp in 0 1 5 20; do
    locks=atomic
    [ "$wp" -ge 5 ] && locks=atomic,flex-leader
    dir="$out/procs$procs-write$wp"
    echo "procs=$procs write-pct=$wp locks=$locks" >&2
    ./target/release/bench --workload snapshot --locks "$locks" --layout all --snapshot all \
      --threads "$threads" --procs "$procs" --write-pct "$wp" --trials "$trials" \
      --duration "$duration" --warmup 50ms --out "$dir" > "$dir.txt"
    # Prefix each point with the sweep's own axes.
    if [ ! -f "$combined" ]; then
      echo "procs,write_pct,$(head -1 "$dir/points.csv")" > "$combined"
    fi
    tail -n +2 "$dir/points.csv" | sed "s/^/$procs,$wp,/" >> "$combined"
  done
done
echo "wrote $combined" >&2

#!/usr/bin/env bash
# The simulator's speed table (docs/results.md, "Speed"): every reference lock and both LWLocks
# under the lwsim example's 95/5 shared/exclusive mix (cs 50 ns, think 200 ns), 10 ms virtual, at
# 64 cores of xeon-2s-broadwell and 256 cores of epyc-2s-genoa; wall time and simulated memory
# operations per real second as the example reports them (`real s`, `M events/s`), and the
# scheduler's steps. A benchmark, not a test: the figures depend on the host and its load.
# Usage: lwsim/scripts/speed-table.sh [--no-spin-jumps] [LOCK...]
set -euo pipefail
cd "$(dirname "$0")/../.."
extra=()
if [ "${1:-}" = "--no-spin-jumps" ]; then
    extra=(--no-spin-jumps)
    shift
fi
locks=("$@")
[ ${#locks[@]} -gt 0 ] || locks=(atomic classic tas ticket mcs qspinlock)
RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -q -p lwlock --example lwsim
B=target/lwsim/release/examples/lwsim
echo "| lock | profile | cores | virtual ms | wall s | M events/s | steps |"
echo "|---|---|---:|---:|---:|---:|---:|"
for lock in "${locks[@]}"; do
    for pc in xeon-2s-broadwell:64 epyc-2s-genoa:256; do
        p=${pc%:*} c=${pc#*:}
        out=$($B --lock "$lock" --profile "$p" --cores "$c" --duration-us 10000 --verbose "${extra[@]}" 2>&1)
        row=$(grep "^| $c |" <<<"$out")
        wall=$(awk -F'|' '{gsub(/ /, "", $10); print $10}' <<<"$row")
        eps=$(awk -F'|' '{gsub(/ /, "", $11); print $11}' <<<"$row")
        steps=$(grep -o '[0-9]* steps' <<<"$out" | tail -1 | cut -d' ' -f1)
        echo "| $lock | $p | $c | 10 | $wall | $eps | $steps |"
    done
done

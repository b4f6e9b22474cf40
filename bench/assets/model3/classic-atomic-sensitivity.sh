#!/usr/bin/env bash
# The classic-against-atomic sensitivity table of docs/results.md ("Finding re-examined: the
# classic lock beats the atomic one from 40 cores on a zero-work mix") under model 3: the lwsim
# example's 95/5 mix on xeon-2s-broadwell at 64 cores, 1 ms virtual, five seeds per cell; each
# parameter at half and twice its profile value, then each structural option at its other choice
# and model 2 as a whole. Prints the table (Mops/s median and min-max over the seeds).
# Run from the repository root after
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p lwlock --example lwsim
set -euo pipefail
B=${B:-target/lwsim/release/examples/lwsim}
cell() { # LOCK [SET]
    local args=(--lock "$1" --cores 64 --duration-us 1000 --seeds 5)
    [ -n "${2:-}" ] && args+=(--set "$2")
    "$B" "${args[@]}" 2>&1 | awk -F'|' '/^\| 64 \|/ {gsub(/ /, ""); print $4, $5, $6}'
}
row() { # LABEL [SET]
    read -r am amin amax < <(cell atomic "${2:-}")
    read -r cm cmin cmax < <(cell classic "${2:-}")
    printf '| %s | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %.2f |\n' "$1" "$am" "$amin" "$amax" \
        "$cm" "$cmin" "$cmax" "$(python3 -c "print($cm / $am if $am > 0 else float('inf'))")"
}
echo "| variant | atomic | classic | classic / atomic (medians) |"
echo "|---|---|---|---:|"
row base
for kv in residency_ns:25.8 jitter:0.2 futex_wake_ns:1500 instruction_ns:0.159 \
    idle_exit_ns:133000 store_buffer_entries:42 invalidate_per_sharer_ns:1; do
    k=${kv%:*} v=${kv#*:}
    row "$k x0.5" "$k=$(python3 -c "print($v * 0.5)")"
    row "$k x2" "$k=$(python3 -c "print($v * 2)")"
done
# Arbitration is at its maximum, 1, on the profile: only its half.
row "arbitration x0.5" arbitration=0.5
row "idle_exit_ns 0" idle_exit_ns=0
row "smt_share 1 (off)" smt_share=1
row "smt_share 0.5" smt_share=0.5
for kv in residency_after_store=1 shared_load_llc=0 wake_placement=0 pair_latency=0 \
    ownership_until_snoop=1 home_node=1 model=2; do
    row "structural: \`${kv/=/\` }" "$kv"
done

#!/usr/bin/env bash
# The points past the core count that carried `fair_short` when the simulator counted only its
# run-queue dispatches, rerun with the same seeds and settings (only the client counts past the
# cores) by the lwbench that counts context switches as Linux does; docs/results.md, "The seeds,
# as the threads ran them" and "PostgreSQL 15's own traffic on many cores", has the figures.
#
# Run from the repository root with the simulated build:
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench --features stats
#   bench/assets/timescale/run.sh            # every part
#   bench/assets/timescale/run.sh seed-002   # one part (the list at the end)
# Each part writes its directory here; compare.py holds each against the committed run it
# repeats (every column but the switch columns equal) and prints the per-point table:
#   bench/assets/timescale/run.sh compare
set -euo pipefail
B=${B:-target/lwsim/release/lwbench}
D=${D:-bench/assets/timescale}
E=bench/experiments
A=bench/assets
part() {
    case $1 in
    group-clear) "$B" --experiment $E/group-clear.toml --engine sim --jobs 1 --threads 128,256 \
        --out "$D/group-clear" ;;
    seed-002) "$B" --experiment $E/seed-002-snapshot-n-128.toml --engine sim --jobs 1 \
        --threads 80 --out "$D/seed-002-n-128" ;;
    seed-000) "$B" --experiment $E/seed-000-pgbench-select.toml --engine sim --jobs 1 \
        --threads 160 --out "$D/seed-000" ;;
    seed-004) "$B" --experiment $E/seed-004-clog-group.toml --engine sim --jobs 1 --threads 192 \
        --duration 100ms --out "$D/seed-004" ;;
    compare)
        args=()
        for p in group-clear:experiments/group-clear seed-002-n-128:experiments/seed-002-snapshot-n-128 \
            seed-000:experiments/seed-000-pgbench-select \
            seed-004:experiments/seed-004-clog-group/past-cores; do
            if [ -d "$D/${p%%:*}" ]; then args+=("$A/${p#*:}" "$D/${p%%:*}"); fi
        done
        python3 $D/compare.py "${args[@]}" ;;
    *)
        echo "run.sh: unknown part '$1' (group-clear, seed-002, seed-000, seed-004, compare)" >&2
        exit 2
        ;;
    esac
}
if [ $# -eq 0 ]; then set -- group-clear seed-002 seed-000 seed-004 compare; fi
for p in "$@"; do part "$p"; done

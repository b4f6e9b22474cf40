#!/usr/bin/env bash
# PostgreSQL 15's recorded traffic (bench/traces/pg15-{S,N}-c1) replayed on the simulated
# xeon-2s-broadwell (72 hardware threads) with the era families; docs/results.md, "PostgreSQL
# 15's own traffic on many cores", has the figures and how to read them.
#
# Run from the repository root with the simulated build:
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench --features stats
#   bench/assets/replay-many/run.sh            # every part
#   bench/assets/replay-many/run.sh N          # one part: S, N, S-residency0, N-residency0
# Each part writes its directory here (results.csv: one row per trial; points.csv; the SVG).
# Simulated trials are deterministic: the same command writes the same rows.
set -euo pipefail
B=${B:-target/lwsim/release/lwbench}
JOBS=${JOBS:-2}
D=bench/assets/replay-many
# 9.4 classic, 9.5+ atomic, 9.6 group clear, 11 CLOG group update (with the group clear),
# the 2011 FlexLock patch, the drop-in default (lwlock::RwLock's raw lock).
LOCKS=classic,atomic,group-clear,clog-group,flexlock-2011,atomic-empty-yield
common=(--engine sim --platform xeon-2s-broadwell --locks "$LOCKS" --trials 10 --jobs "$JOBS" --seed 1)
part() {
    case $1 in
    S) "$B" "${common[@]}" --workload trace:bench/traces/pg15-S-c1 --threads 8,36,72,216 \
        --duration 10ms --warmup 3ms --out "$D/S" ;;
    N) "$B" "${common[@]}" --workload trace:bench/traces/pg15-N-c1 --threads 8,36,72,216 \
        --duration 20ms --warmup 5ms --out "$D/N" ;;
    # The structural option (the sensitivity arm), at the largest client count: a plain
    # store's grant opens no residency window (only an RMW's does).
    S-residency0) "$B" "${common[@]}" --trials 5 --set residency_after_store=0 \
        --workload trace:bench/traces/pg15-S-c1 --threads 216 --duration 10ms --warmup 3ms \
        --out "$D/S-residency0" ;;
    N-residency0) "$B" "${common[@]}" --trials 5 --set residency_after_store=0 \
        --workload trace:bench/traces/pg15-N-c1 --threads 216 --duration 20ms --warmup 5ms \
        --out "$D/N-residency0" ;;
    *) echo "run.sh: unknown part '$1' (S, N, S-residency0, N-residency0)" >&2; exit 2 ;;
    esac
}
if [ $# -eq 0 ]; then set -- S N S-residency0 N-residency0; fi
for p in "$@"; do part "$p"; done

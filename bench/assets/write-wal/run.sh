#!/usr/bin/env bash
# The graded runs of the lock-level write shapes (`pgbench-write`: group clear;
# `pgbench-write-status`: seed 004) rerun after the shapes gained MultiXactGenLock and their WAL
# records under the WAL insertion locks; docs/results.md, "The lock-level write shapes with their
# WAL records", has the figures.
#
# Run from the repository root with the simulated build:
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench --features stats
#   bench/assets/write-wal/run.sh          # every part
#   bench/assets/write-wal/run.sh b        # one part: a (group clear), b (seed 004, 32-96), c (seed 004, 192),
#                                          # d and e (their parameter sweeps), f (group clear, 50 ms)
# Each part writes bench/assets/write-wal/<the committed run's path>; the same seeds and settings
# as the committed run (its meta.json), with the counters uncharged as in bench/assets/stats-uncharged/:
#   bench/assets/stats-uncharged/compare.py --base=stats-uncharged --rerun=write-wal RUN
set -euo pipefail
B=${B:-target/lwsim/release/lwbench}
JOBS=${JOBS:-1}
D=bench/assets/write-wal/experiments
E=bench/experiments
part() {
    case $1 in
    a) mkdir -p "$D/group-clear"
       find "$D/group-clear" -maxdepth 1 -type f -delete
       "$B" --experiment $E/group-clear.toml --engine sim --jobs "$JOBS" --out "$D/group-clear" ;;
    b) mkdir -p "$D/seed-004-clog-group"
       find "$D/seed-004-clog-group" -maxdepth 1 -type f -delete
       "$B" --experiment $E/seed-004-clog-group.toml --engine sim --threads 32,64,96 --jobs "$JOBS" \
           --out "$D/seed-004-clog-group" ;;
    c) rm -rf "$D/seed-004-clog-group/past-cores"; mkdir -p "$D/seed-004-clog-group"
       "$B" --experiment $E/seed-004-clog-group.toml --engine sim --threads 192 --duration 100ms \
           --jobs "$JOBS" --out "$D/seed-004-clog-group/past-cores" ;;
    # The parameter sweeps (each key halved and doubled, the same seeds): seed 004 at 32-96
    # clients, group clear at 64.
    d) rm -rf "$D/seed-004-clog-group/sensitivity"; mkdir -p "$D/seed-004-clog-group"
       "$B" --experiment $E/seed-004-clog-group.toml --engine sim --threads 32,64,96 \
           --sensitivity residency_ns,jitter,futex_wake_ns,instruction_ns --jobs "$JOBS" \
           --out "$D/seed-004-clog-group/sensitivity" ;;
    e) rm -rf "$D/group-clear/sensitivity"; mkdir -p "$D/group-clear"
       "$B" --experiment $E/group-clear.toml --engine sim --threads 64 \
           --sensitivity residency_ns,jitter,futex_wake_ns,instruction_ns --jobs "$JOBS" \
           --out "$D/group-clear/sensitivity" ;;
    # Group clear past its 64 cores in windows long enough for the timescale rule (>= 20
    # context switches per client): 128 and 256 clients, 50 ms.
    f) rm -rf "$D/group-clear/long"; mkdir -p "$D/group-clear"
       "$B" --experiment $E/group-clear.toml --engine sim --threads 128,256 --duration 50ms \
           --jobs "$JOBS" --out "$D/group-clear/long" ;;
    *) echo "run.sh: unknown part '$1' (a, b, c, d, e, f)" >&2; exit 2 ;;
    esac
}
if [ $# -eq 0 ]; then set -- a b c d e f; fi
for p in "$@"; do part "$p"; done

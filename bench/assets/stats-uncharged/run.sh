#!/usr/bin/env bash
# The committed simulated runs that decide the seeds' verdicts, rerun with the `stats` build's
# counter increments uncharged (`lwlock::sync::stat_add`): the same command lines as the runs in
# bench/assets/<same path>/meta.json, with --jobs 1 and the output here. `compare.py` sets each
# against the committed run. Usage (from the repository root, after building the simulated
# lwbench: RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench
# --features stats): bench/assets/stats-uncharged/run.sh [a|b|all]  (a and b split the runs in two
# queues of about equal time). The trace replays are rerun in place by
# bench/assets/replay-many/run.sh, after the replay's own fix.
set -euo pipefail
cd "$(dirname "$0")/../../.."
B=target/lwsim/release/lwbench
D=bench/assets/stats-uncharged
part=${1:-all}

if [ "$part" = a ] || [ "$part" = all ]; then
    rm -rf "$D/experiments/seed-000-pgbench-select"; mkdir -p "$(dirname "$D/experiments/seed-000-pgbench-select")"
    $B --experiment bench/experiments/seed-000-pgbench-select.toml --engine sim --threads 1,4,8,16,24,32,40,64,80,160 --jobs 1 --out $D/experiments/seed-000-pgbench-select
    rm -rf "$D/experiments/seed-003-pin"; mkdir -p "$(dirname "$D/experiments/seed-003-pin")"
    $B --experiment bench/experiments/seed-003-pin.toml --engine sim --jobs 1 --out $D/experiments/seed-003-pin
    rm -rf "$D/experiments/group-clear"; mkdir -p "$(dirname "$D/experiments/group-clear")"
    $B --experiment bench/experiments/group-clear.toml --engine sim --jobs 1 --out $D/experiments/group-clear
    rm -rf "$D/experiments/seed-002-snapshot"; mkdir -p "$(dirname "$D/experiments/seed-002-snapshot")"
    $B --experiment bench/experiments/seed-002-snapshot.toml --engine sim --jobs 1 --out $D/experiments/seed-002-snapshot
fi
if [ "$part" = b ] || [ "$part" = all ]; then
    rm -rf "$D/experiments/seed-001-flexlock"; mkdir -p "$(dirname "$D/experiments/seed-001-flexlock")"
    $B --experiment bench/experiments/seed-001-flexlock.toml --engine sim --jobs 1 --out $D/experiments/seed-001-flexlock
    rm -rf "$D/experiments/seed-004-clog-group"; mkdir -p "$(dirname "$D/experiments/seed-004-clog-group")"
    $B --experiment bench/experiments/seed-004-clog-group.toml --engine sim --threads 32,64,96 --jobs 1 --out $D/experiments/seed-004-clog-group
    rm -rf "$D/experiments/seed-004-clog-group/status-lookups/x10"; mkdir -p "$(dirname "$D/experiments/seed-004-clog-group/status-lookups/x10")"
    $B --experiment bench/experiments/seed-004-clog-group.toml --engine sim --status-lookups 10 --threads 32,64,96 --jobs 1 --out $D/experiments/seed-004-clog-group/status-lookups/x10
    rm -rf "$D/experiments/seed-004-clog-group/past-cores"; mkdir -p "$(dirname "$D/experiments/seed-004-clog-group/past-cores")"
    $B --experiment bench/experiments/seed-004-clog-group.toml --engine sim --threads 192 --duration 100ms --jobs 1 --out $D/experiments/seed-004-clog-group/past-cores
fi
if [ "$part" = c ] || [ "$part" = all ]; then
    # The 9.4 -> 9.5 direction below the compute limit (results.md, "Below the compute limit").
    rm -rf "$D/direction-below"
    $B --engine sim --platform xeon-4s-westmere-ex --workload pgbench-select --work 1000 --locks classic,atomic \
        --threads 8,16,40,80 --trials 10 --duration 200us --sensitivity residency_after_store,shared_load_llc --jobs 1 --out $D/direction-below
    # The same with the residency window halved and doubled (the classic lock is bistable there).
    rm -rf "$D/direction-below-residency"
    $B --engine sim --platform xeon-4s-westmere-ex --workload pgbench-select --work 1000 --locks classic,atomic \
        --threads 8,16,40,80 --trials 10 --duration 200us --sensitivity residency_ns --jobs 1 --out $D/direction-below-residency
fi
if [ "$part" = d ] || [ "$part" = all ]; then
    rm -rf "$D/experiments/seed-004-clog-group/status-lookups/x30"; mkdir -p "$(dirname "$D/experiments/seed-004-clog-group/status-lookups/x30")"
    $B --experiment bench/experiments/seed-004-clog-group.toml --engine sim --status-lookups 30 --threads 32,64,96 --jobs 1 --out $D/experiments/seed-004-clog-group/status-lookups/x30
fi
if [ "$part" = e ] || [ "$part" = all ]; then
    # The parameter sweeps of group clear at 64 clients and seed 003 at 24/32/64.
    rm -rf "$D/experiments/group-clear/sensitivity-rerun"
    $B --experiment bench/experiments/group-clear.toml --engine sim --jobs 1 --threads 64 --sensitivity residency_ns,jitter,futex_wake_ns,instruction_ns --out $D/experiments/group-clear/sensitivity-rerun
    rm -rf "$D/experiments/seed-003-pin/sensitivity-rerun"
    $B --experiment bench/experiments/seed-003-pin.toml --engine sim --jobs 1 --threads 24,32,64 --sensitivity residency_ns,jitter,futex_wake_ns,instruction_ns --out $D/experiments/seed-003-pin/sensitivity-rerun
fi
if [ "$part" = f ] || [ "$part" = all ]; then
    # Seed 004 at 32-96 clients with the residency window halved and doubled.
    rm -rf "$D/experiments/seed-004-clog-group/residency"
    $B --experiment bench/experiments/seed-004-clog-group.toml --engine sim --threads 32,64,96 --sensitivity residency_ns --jobs 2 --out $D/experiments/seed-004-clog-group/residency
fi
if [ "$part" = g ] || [ "$part" = all ]; then
    # Seed 002's parameter sweep (-S, every client count of its file).
    rm -rf "$D/experiments/seed-002-snapshot/sensitivity"
    $B --experiment bench/experiments/seed-002-snapshot.toml --engine sim --sensitivity residency_ns,jitter,futex_wake_ns,instruction_ns --jobs 2 --out $D/experiments/seed-002-snapshot/sensitivity
fi

#!/usr/bin/env bash
# Seed 004's experiment with the CLOG status lookups per transaction swept (`--status-lookups`):
# HEAD (`group-clear`) and the patch (`clog-group`), ten seeds per point, the seed file's
# profile, work and idle time; 32-96 clients with the file's 20 ms windows, 192 clients (past
# the 160 hardware threads) with 100 ms windows, as the main run. The main run is X = 57.62
# (the default): ../ (32-96) and ../past-cores/ (192). docs/results.md, "Seed 004, as the
# thread ran it", has the figures and how to read them.
#
# Run from the repository root with the simulated build:
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench --features stats
#   bench/assets/experiments/seed-004-clog-group/status-lookups/run.sh          # every part
#   bench/assets/experiments/seed-004-clog-group/status-lookups/run.sh x10      # one part
# Each part writes its directory here (results.csv: one row per trial; points.csv; waits.csv;
# experiment.md and experiment.svg: the thread's figures beside ours). Simulated trials are
# deterministic: the same command writes the same rows.
set -euo pipefail
B=${B:-target/lwsim/release/lwbench}
JOBS=${JOBS:-1}
D=bench/assets/experiments/seed-004-clog-group/status-lookups
F=bench/experiments/seed-004-clog-group.toml
run() { # X, directory, extra options
    local x=$1 dir=$2
    shift 2
    "$B" --experiment "$F" --engine sim --jobs "$JOBS" --status-lookups "$x" "$@" --out "$D/$dir"
}
part() {
    case $1 in
    x0 | x10 | x30) run "${1#x}" "$1" --threads 32,64,96 ;;
    x0-past-cores | x10-past-cores | x30-past-cores)
        x=${1#x}
        run "${x%-past-cores}" "$1" --threads 192 --duration 100ms
        ;;
    *)
        echo "run.sh: unknown part '$1' (x0, x10, x30, x0-past-cores, x10-past-cores, x30-past-cores)" >&2
        exit 2
        ;;
    esac
}
if [ $# -eq 0 ]; then set -- x10 x30 x0 x10-past-cores x30-past-cores x0-past-cores; fi
for p in "$@"; do part "$p"; done

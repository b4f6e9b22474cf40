#!/usr/bin/env bash
# The seeds' headline points and group clear under model 3's structural defaults (docs/design.md,
# "Model 3: the structural defaults"), each with every structural option at its other choice
# (`--sensitivity`, the same seeds), at the points of bench/assets/executor-fix/run.sh's parts
# n-q, which ran under model 2's defaults: so each seed's base column here is model 3's figure,
# and the executor-fix run's base column is model 2's.
#
# Run from the repository root with the simulated build:
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench --features stats
#   bench/assets/model3/run.sh          # every part
#   bench/assets/model3/run.sh b        # one part (a-h, below)
# Part g is the drop-in defaults' sweep of bench/assets/dropin-structural (model 2's) under model
# 3, with pair_latency among the options (xeon-2s-broadwell has a measured matrix). Part h is
# the published curves (the published_curves example, seed 0) under model 3, under model 2
# (--set model=2) and with each structural option at its other choice, one file per arm in
# bench/assets/model3/published/ (its table.md from published-table.py):
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p lwlock --example published_curves
set -euo pipefail
B=${B:-target/lwsim/release/lwbench}
JOBS=${JOBS:-1}
D=bench/assets/model3/experiments
E=bench/experiments
S=residency_after_store,shared_load_llc,wake_placement,ownership_until_snoop,home_node
fresh() { rm -rf "$1"; mkdir -p "$(dirname "$1")"; }
run() { # NAME THREADS [ARGS...]
    local name=$1 threads=$2
    shift 2
    fresh "$D/$name"
    "$B" --experiment "$E/$name.toml" --engine sim --threads "$threads" --jobs "$JOBS" \
        --sensitivity "$S" "$@" --out "$D/$name"
}
part() {
    case $1 in
    a) run group-clear 64 ;;
    b) run seed-003-pin 24,32,48 ;;
    c) run seed-001-flexlock 32,64 ;;
    d) run seed-004-clog-group 32,64,96 ;;
    e) run seed-002-snapshot 32
       run seed-002-snapshot-n 32,64 ;;
    f) run seed-000-pgbench-select 40,80 ;;
    g) fresh "$D/dropin-defaults"
       "$B" --engine sim --workload end-xact,clog,pgbench-write,snapshot --write-pct 5 \
           --threads 8,16,32,64 --cores 64 --locks atomic-taskfair,atomic-handoff,atomic-adaptive \
           --trials 10 --jobs "$JOBS" --sensitivity "$S,pair_latency" --out "$D/dropin-defaults" ;;
    h) P=${P:-target/lwsim/release/examples/published_curves}
       O=bench/assets/model3/published
       mkdir -p "$O"
       "$P" > "$O/default.md"
       "$P" --set model=2 > "$O/model2.md"
       "$P" --set residency_after_store=1 > "$O/residency_after_store-1.md"
       "$P" --set shared_load_llc=0 > "$O/shared_load_llc-0.md"
       "$P" --set wake_placement=0 > "$O/wake_placement-0.md"
       "$P" --set pair_latency=0 --curves folly-microspin,folly-mcs,rwspin-100,rwspin-10,rwspin-1,rwspin-0 \
           > "$O/pair_latency-0.md"
       "$P" --set ownership_until_snoop=1 > "$O/ownership_until_snoop-1.md"
       "$P" --set home_node=1 --curves torture,rwspin-100 > "$O/home_node-1.md"
       bench/assets/model3/published-table.py "$O" > "$O/table.md" ;;
    *) echo "run.sh: unknown part '$1' (a-h)" >&2; exit 2 ;;
    esac
}
if [ $# -eq 0 ]; then set -- a b c d e f g h; fi
for p in "$@"; do part "$p"; done

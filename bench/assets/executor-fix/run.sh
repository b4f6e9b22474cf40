#!/usr/bin/env bash
# The seeds' points at and past the core count, rerun after the executor's fix (a thread in a
# timed sleep no longer holds or queues for a core through the sleep; docs/results.md, "The
# executor's fix"), with the same seeds and settings as the committed runs they repeat (their
# meta.json), and the long windows the timescale rule asks for there.
#
# Run from the repository root with the simulated build:
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench --features stats
#   bench/assets/executor-fix/run.sh          # every part
#   bench/assets/executor-fix/run.sh b        # one part (a-q, below)
# Parts a-e repeat a committed run at its client counts at and past the cores (and one below,
# as a control that must not move):
#   bench/assets/stats-uncharged/compare.py --base=stats-uncharged --rerun=executor-fix experiments/seed-000-pgbench-select
set -euo pipefail
B=${B:-target/lwsim/release/lwbench}
JOBS=${JOBS:-1}
D=bench/assets/executor-fix/experiments
E=bench/experiments
fresh() { rm -rf "$1"; mkdir -p "$(dirname "$1")"; }
part() {
    case $1 in
    # Seed 000 (xeon-4s-westmere-ex, 80 hardware threads): 64 (control), 80 and 160 clients, 5 ms.
    a) fresh "$D/seed-000-pgbench-select"
       "$B" --experiment $E/seed-000-pgbench-select.toml --engine sim --threads 64,80,160 --jobs "$JOBS" \
           --out "$D/seed-000-pgbench-select" ;;
    # Seed 001 (xeon-4s-nehalem-ex, 64 hardware threads): 32 (control), 64, 80, 96 and 128 clients, 10 ms.
    b) fresh "$D/seed-001-flexlock"
       "$B" --experiment $E/seed-001-flexlock.toml --engine sim --threads 32,64,80,96,128 --jobs "$JOBS" \
           --out "$D/seed-001-flexlock" ;;
    # Seed 002's claim on -N (opteron-4s-6128, 32 cores): 32 (the cores), 48, 64 and 80 clients,
    # without and with 9.2's one WALInsertLock.
    c) fresh "$D/seed-002-snapshot-n"
       "$B" --experiment $E/seed-002-snapshot-n.toml --engine sim --threads 32,48,64,80 --jobs "$JOBS" \
           --out "$D/seed-002-snapshot-n" ;;
    d) fresh "$D/seed-002-snapshot-n/era-wal"
       "$B" --experiment $E/seed-002-snapshot-n.toml --engine sim --threads 32,48,64,80 --jobs "$JOBS" \
           --era-traffic walinsertlock,nomultixact --out "$D/seed-002-snapshot-n/era-wal" ;;
    # Seed 003 (epyc-2s-genoa, 64 cores): 24 (control) and 32-128 clients, 1 ms.
    e) fresh "$D/seed-003-pin"
       "$B" --experiment $E/seed-003-pin.toml --engine sim --threads 24,32,48,64,72,96,108,128 --jobs "$JOBS" \
           --out "$D/seed-003-pin" ;;
    # Long windows (>= 20 context switches per client, the timescale rule), ten seeds, the
    # thread's lock only (classic): seed 000's unpatched shape at 160 clients over 40 ms (its
    # clients sleep on the partition locks: 16-18 switches per client in 5 ms) ...
    f) fresh "$D/seed-000-pgbench-select/long"
       "$B" --engine sim --platform xeon-4s-westmere-ex --cores 80 --workload select-lmgr \
           --locks classic --layout padded --era-traffic sinval,freelist --work 128000 --threads 160 --trials 10 \
           --duration 40ms --warmup 2ms --jobs "$JOBS" --out "$D/seed-000-pgbench-select/long" ;;
    # ... and seed 001's master at 128 clients over 530 ms and 96 over 750 ms (the windows of
    # its four-seed runs in bench/assets/experiments/seed-001-flexlock/long*, now ten seeds).
    g) fresh "$D/seed-001-flexlock/long"
       "$B" --engine sim --platform xeon-4s-nehalem-ex --cores 64 --workload select-lazy-vxid --locks classic \
           --layout padded --work 127000 --threads 128 --trials 10 --duration 530ms --warmup 5ms \
           --jobs "$JOBS" --out "$D/seed-001-flexlock/long" ;;
    h) fresh "$D/seed-001-flexlock/long96"
       "$B" --engine sim --platform xeon-4s-nehalem-ex --cores 64 --workload select-lazy-vxid --locks classic \
           --layout padded --work 127000 --threads 96 --trials 10 --duration 750ms --warmup 5ms \
           --jobs "$JOBS" --out "$D/seed-001-flexlock/long96" ;;
    # The parameter sweeps (each key halved and doubled, the same seeds) on the uncharged build,
    # after the fix: seed 000 at 40 and 80 clients (the points of its earlier sweep,
    # bench/assets/experiments/seed-000-era/sensitivity-rerun), seed 001 at 32, 64 and 128.
    i) fresh "$D/seed-000-pgbench-select/sensitivity"
       "$B" --experiment $E/seed-000-pgbench-select.toml --engine sim --threads 40,80 \
           --sensitivity residency_ns,jitter,futex_wake_ns,instruction_ns --jobs "$JOBS" \
           --out "$D/seed-000-pgbench-select/sensitivity" ;;
    j) fresh "$D/seed-001-flexlock/sensitivity"
       "$B" --experiment $E/seed-001-flexlock.toml --engine sim --threads 32,64,128 \
           --sensitivity residency_ns,jitter,futex_wake_ns,instruction_ns --jobs "$JOBS" \
           --out "$D/seed-001-flexlock/sensitivity" ;;
    # Seed 000 at 200 clients (the thread's last point), 5 ms: its first run ended in the
    # stuck-spinlock PANIC whose cause was the executor's, so the committed run left it out.
    k) fresh "$D/seed-000-pgbench-select/200"
       "$B" --experiment $E/seed-000-pgbench-select.toml --engine sim --threads 200 --jobs "$JOBS" \
           --out "$D/seed-000-pgbench-select/200" ;;
    # Seed 003's three patches (the thread's 9.3 rows, classic) at 128 clients on its 64 cores in
    # 500 ms windows, ten seeds: the 1 ms windows past the cores leave 0-0.7 switches per client.
    l) fresh "$D/seed-003-pin/long"
       "$B" --engine sim --platform epyc-2s-genoa --cores 64 --workload scan-93,pin-93,pin-vm-93 --locks classic \
           --work 24000 --threads 128 --trials 10 --duration 500ms --warmup 500us --jobs "$JOBS" \
           --out "$D/seed-003-pin/long" ;;
    # Seed 000's fast locks + lazy vxid at 160 clients over 600 ms: its clients never block, so
    # only slice ends switch them (1.4 per client in 40 ms).
    m) fresh "$D/seed-000-pgbench-select/long-lazy-vxid"
       "$B" --engine sim --platform xeon-4s-westmere-ex --cores 80 --workload select-lazy-vxid \
           --locks classic --layout padded --era-traffic sinval,freelist --work 128000 --threads 160 --trials 10 \
           --duration 600ms --warmup 2ms --jobs "$JOBS" --out "$D/seed-000-pgbench-select/long-lazy-vxid" ;;
    # lwsim 3's structural options, each once at its other choice, on the current shapes and
    # build: seed 003 at its knee and fall (24, 32, 48), group clear at 64 (n), seed 004 at
    # 32-96 (o).
    n) fresh "$D/seed-003-pin/structural"
       "$B" --experiment $E/seed-003-pin.toml --engine sim --threads 24,32,48 --jobs "$JOBS" \
           --sensitivity residency_after_store,shared_load_llc,ownership_until_snoop,home_node,wake_placement \
           --out "$D/seed-003-pin/structural"
       fresh "$D/group-clear/structural"
       "$B" --experiment $E/group-clear.toml --engine sim --threads 64 --jobs "$JOBS" \
           --sensitivity residency_after_store,shared_load_llc,ownership_until_snoop,home_node,wake_placement \
           --out "$D/group-clear/structural" ;;
    o) fresh "$D/seed-004-clog-group/structural"
       "$B" --experiment $E/seed-004-clog-group.toml --engine sim --threads 32,64,96 --jobs "$JOBS" \
           --sensitivity residency_after_store,shared_load_llc,ownership_until_snoop,home_node,wake_placement \
           --out "$D/seed-004-clog-group/structural" ;;
    # The same five structural options for seeds 000 (40, 80), 001 (32, 64) (p) and 002 (-S at
    # 32, -N at 32 and 64) (q).
    p) fresh "$D/seed-000-pgbench-select/structural"
       "$B" --experiment $E/seed-000-pgbench-select.toml --engine sim --threads 40,80 --jobs "$JOBS" \
           --sensitivity residency_after_store,shared_load_llc,ownership_until_snoop,home_node,wake_placement \
           --out "$D/seed-000-pgbench-select/structural"
       fresh "$D/seed-001-flexlock/structural"
       "$B" --experiment $E/seed-001-flexlock.toml --engine sim --threads 32,64 --jobs "$JOBS" \
           --sensitivity residency_after_store,shared_load_llc,ownership_until_snoop,home_node,wake_placement \
           --out "$D/seed-001-flexlock/structural" ;;
    q) fresh "$D/seed-002-snapshot/structural"
       "$B" --experiment $E/seed-002-snapshot.toml --engine sim --threads 32 --jobs "$JOBS" \
           --sensitivity residency_after_store,shared_load_llc,ownership_until_snoop,home_node,wake_placement \
           --out "$D/seed-002-snapshot/structural"
       fresh "$D/seed-002-snapshot-n/structural"
       "$B" --experiment $E/seed-002-snapshot-n.toml --engine sim --threads 32,64 --jobs "$JOBS" \
           --sensitivity residency_after_store,shared_load_llc,ownership_until_snoop,home_node,wake_placement \
           --out "$D/seed-002-snapshot-n/structural" ;;
    *) echo "run.sh: unknown part '$1' (a-q)" >&2; exit 2 ;;
    esac
}
if [ $# -eq 0 ]; then set -- a b c d e f g h i j k l m n o p q; fi
for p in "$@"; do part "$p"; done

#!/usr/bin/env bash
# PostgreSQL 15's recorded traffic (bench/traces/pg15-{S,N,tpcb}-c1) replayed on the simulated
# xeon-2s-broadwell (72 hardware threads) with the era families; docs/results.md, "PostgreSQL
# 15's own traffic on many cores", has the figures and how to read them.
#
# Run from the repository root with the simulated build:
#   RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim cargo build --release -p bench --features stats
#   bench/assets/replay-many/run.sh            # every part
#   bench/assets/replay-many/run.sh T          # one part (the list at the end)
# Each part writes its directory here (results.csv: one row per trial; points.csv; the SVG).
# Simulated trials are deterministic: the same command writes the same rows.
set -euo pipefail
B=${B:-target/lwsim/release/lwbench}
JOBS=${JOBS:-2}
D=bench/assets/replay-many
# The families: 9.5+ atomic, 9.6 group clear, 11 CLOG group update (with the group clear), the
# drop-in default (lwlock::RwLock's raw lock); and the spinlock era, 9.4 classic and the 2011
# FlexLock patch (ProcArrayLock a FlexLock over the classic LWLock, the rest classic).
ATOMIC=atomic,group-clear,clog-group,atomic-empty-yield
SPIN=classic,flexlock-2011
common=(--engine sim --platform xeon-2s-broadwell --jobs "$JOBS" --seed 1)
S=(--workload trace:bench/traces/pg15-S-c1 --duration 10ms --warmup 3ms)
ten=(--trials 10)
N=(--workload trace:bench/traces/pg15-N-c1 --duration 20ms --warmup 5ms)
T=(--workload trace:bench/traces/pg15-tpcb-c1 --duration 20ms --warmup 5ms)
part() {
    case $1 in
    S) "$B" "${common[@]}" "${ten[@]}" "${S[@]}" --locks "$ATOMIC" --threads 8,36,72,216 --out "$D/S" ;;
    N) "$B" "${common[@]}" "${ten[@]}" "${N[@]}" --locks "$ATOMIC" --threads 8,36,72,216 --out "$D/N" ;;
    S-spin) "$B" "${common[@]}" "${ten[@]}" "${S[@]}" --locks "$SPIN" --threads 8,36,72,216 --out "$D/S-spin" ;;
    N-spin) "$B" "${common[@]}" "${ten[@]}" "${N[@]}" --locks "$SPIN" --threads 8,36,72,216 --out "$D/N-spin" ;;
    # pgbench's TPC-B-like default: the clog-group family applies here (the CLOG is written).
    T) "$B" "${common[@]}" "${ten[@]}" "${T[@]}" --locks "$ATOMIC" --threads 8,36,72,216 --out "$D/T" ;;
    T-spin) "$B" "${common[@]}" "${ten[@]}" "${T[@]}" --locks "$SPIN" --threads 8,36,72,216 --out "$D/T-spin" ;;
    # The 8-socket profile (160 hardware threads): -S at up to 3x its threads.
    S8) "$B" --engine sim --platform xeon-8s-westmere-ex --jobs "$JOBS" --seed 1 "${ten[@]}" "${S[@]}" \
        --locks "$ATOMIC" --threads 16,80,160,480 --out "$D/S8" ;;
    # -N on the 8-socket profile, the 9.5+ families, the same client counts.
    N8) "$B" --engine sim --platform xeon-8s-westmere-ex --jobs "$JOBS" --seed 1 "${ten[@]}" "${N[@]}" \
        --locks "$ATOMIC" --threads 16,80,160,480 --out "$D/N8" ;;
    # The structural option (the sensitivity arm), at the largest client count: a plain
    # store's grant opens no residency window (only an RMW's does); five seeds.
    S-residency0) "$B" "${common[@]}" "${S[@]}" --trials 5 --set residency_after_store=0 \
        --locks "$ATOMIC" --threads 216 --out "$D/S-residency0" ;;
    N-residency0) "$B" "${common[@]}" "${N[@]}" --trials 5 --set residency_after_store=0 \
        --locks "$ATOMIC" --threads 216 --out "$D/N-residency0" ;;
    # The second structural option: a line's ownership kept until the next request's snoop
    # reaches its owner (no fixed residency window); five seeds, 216 clients.
    S-ownership) "$B" "${common[@]}" "${S[@]}" --trials 5 --set ownership_until_snoop=1 \
        --locks "$ATOMIC" --threads 216 --out "$D/S-ownership" ;;
    N-ownership) "$B" "${common[@]}" "${N[@]}" --trials 5 --set ownership_until_snoop=1 \
        --locks "$ATOMIC" --threads 216 --out "$D/N-ownership" ;;
    # 216 clients in windows long enough for the timescale rule (>= 20 context switches per
    # client): -S's clients never block at 216 (they leave a core only at a slice's end, 8 ms),
    # TPC-B-like's block about twice per 20 ms, -N's spinlock era and drop-in default 6-19 times.
    S-long) "$B" "${common[@]}" "${ten[@]}" --workload trace:bench/traces/pg15-S-c1 --duration 250ms \
        --warmup 3ms --locks "$ATOMIC,$SPIN" --threads 216 --out "$D/S-long" ;;
    T-long) "$B" "${common[@]}" "${ten[@]}" --workload trace:bench/traces/pg15-tpcb-c1 --duration 120ms \
        --warmup 5ms --locks "$ATOMIC,$SPIN" --threads 216 --out "$D/T-long" ;;
    N-long) "$B" "${common[@]}" "${ten[@]}" --workload trace:bench/traces/pg15-N-c1 --duration 80ms \
        --warmup 5ms --locks classic,flexlock-2011,atomic-empty-yield --threads 216 --out "$D/N-long" ;;
    # At the core count too (one client per hardware thread): TPC-B-like at 72 clients (its
    # convoy leaves about 11 switches per client in 20 ms) and -N on the 8-socket profile at 160.
    T72-long) "$B" "${common[@]}" "${ten[@]}" --workload trace:bench/traces/pg15-tpcb-c1 --duration 120ms \
        --warmup 5ms --locks atomic,group-clear,clog-group,"$SPIN" --threads 72 --out "$D/T72-long" ;;
    N8-long) "$B" --engine sim --platform xeon-8s-westmere-ex --jobs "$JOBS" --seed 1 "${ten[@]}" \
        --workload trace:bench/traces/pg15-N-c1 --duration 40ms --warmup 5ms \
        --locks atomic,atomic-empty-yield --threads 160 --out "$D/N8-long" ;;
    *)
        echo "run.sh: unknown part '$1' (S, N, S-spin, N-spin, T, T-spin, S8, N8, S-residency0, N-residency0, S-ownership, N-ownership, S-long, T-long, N-long, T72-long, N8-long)" >&2
        exit 2
        ;;
    esac
}
if [ $# -eq 0 ]; then set -- N S S-spin N-spin T T-spin S8 N8 N-residency0 S-residency0 S-ownership N-ownership S-long T-long N-long T72-long N8-long; fi
for p in "$@"; do part "$p"; done

#!/usr/bin/env bash
# lwsim: the many-core simulator. First the lwsim crate's own tests in a normal build (no cfg, no
# lwlock: determinism, the analytic limits of one hot line and of own lines, the OS model's exact
# costs, the profiles). Then the project on the simulator (`--cfg lwsim`, its own target directory
# target/lwsim, since RUSTFLAGS changes rebuild everything): the validation tests on the project's
# locks (determinism, TAS/ticket-vs-MCS shape, the sweep's window count, spin jumps leaving every
# figure unchanged, exact costs of the atomic and classic LWLocks and of the reference locks,
# lock-holder preemption, the FlexLock leader group; a reduced comparison with published curves
# on the profiles of their machines, sim_published.rs), a short sweep, the speed check (a 64-core,
# 10 ms virtual run of the atomic LWLock under a 95/5 shared/exclusive mix must take at most
# 30 s), and lwbench's simulated engine (bench/tests/sim_engine.rs; bench/tests/sim_tools.rs:
# --jobs, --set, --sensitivity; bench/tests/per_lock.rs: each lock's counters apart;
# bench/tests/experiments.rs: every experiment file at a tiny scale; bench/tests/shards.rs:
# --shard and lwbench merge, alone and on a real single-node Slurm; bench/tests/sim_replay.rs:
# a recorded PostgreSQL trace replayed, deterministically, past the cores on the many-core
# profile, one client at the recorded rate; bench/tests/sim_cpu.rs: CPU busy per point; the
# ticket-lock example on the simulator).
# Usage: ci/sim.sh
set -euo pipefail
cd "$(dirname "$0")/.."
unset CARGO_ENCODED_RUSTFLAGS

# ci/test.sh sets LWSIM_CRATE_TESTS_DONE=1: its workspace step (`cargo test --workspace
# --all-targets`) has just run these same tests, in the same build profile.
if [ "${LWSIM_CRATE_TESTS_DONE:-0}" = 1 ]; then
    echo "== lwsim: the simulator crate's own tests: run by the workspace step of ci/test.sh"
else
    echo "== lwsim: the simulator crate's own tests (a normal build)"
    cargo test -p lwsim
fi

export RUSTFLAGS="--cfg lwsim" CARGO_TARGET_DIR=target/lwsim

echo "== lwsim: tests on the project's locks"
cargo test --release -p lwlock --test sim_validation --test sim_os --test sim_patterns --test sim_claims --test sim_layout -- --nocapture
echo "== lwsim: held against published curves (folly's spinlocks and RW spinlock, locktorture's qspinlock), reduced: exact simulated values and the points within +-30 %"
cargo test --release -p lwlock --test sim_published
cargo test --release -p flexlock --test sim_group

echo "== lwsim: lwbench --engine sim (determinism, the acceptance sweep's files and columns, group-lock costs, --work's cost on the pgbench shapes, bad input)"
cargo test --release -p bench --features stats --test sim_engine
echo "== lwsim: lwbench's sweep tools (--jobs leaves every file byte-identical, --set, --sensitivity, bad values)"
cargo test --release -p bench --features stats --test sim_tools
cargo test --release -p bench --features stats --test clog_work
echo "== lwsim: the per-lock choice (group-clear: ProcArrayLock and the CLOG lock of two types, each one's counters apart)"
cargo test --release -p bench --features stats --test per_lock
echo "== lwsim: every experiment file (bench/experiments/) at a tiny scale on the simulator, and bad files"
cargo test --release -p bench --features stats --test experiments -- --nocapture
echo "== lwsim: --shard K/N and lwbench merge (the merge of 3 shards byte-identical to one run; missing, duplicate, foreign and incomplete shards refused; a sharded experiment on a real single-node Slurm, 4 array tasks and the merge job, skipped without Slurm unless LWLAB_REQUIRE_SLURM=1)"
cargo test --release -p bench --features stats --test shards -- --nocapture
echo "== lwsim: a recorded PostgreSQL trace replayed on the simulator (--workload trace:FILE: the counts checked, deterministic)"
cargo test --release -p bench --features stats --test sim_replay
echo "== lwsim: CPU busy and CPU seconds per transaction (one worker keeps one core of four busy; contention costs CPU)"
cargo test --release -p bench --features stats --test sim_cpu
echo "== lwsim: context switches counted as Linux counts them (a client that blocks every transaction counts a voluntary switch each, never dispatched)"
cargo test --release -p bench --features stats --test sim_context_switches

echo "== lwsim: a user's lock registered by its own main, on the simulated machine"
cargo run --release -p bench --features stats --example ticket_lock -- --engine sim \
    --workload end-xact --locks atomic,ticket --threads 1,8 --trials 1 --duration 200us \
    --out target/lwsim/ticket-lock-sim
grep -q '^end-xact,ticket,' target/lwsim/ticket-lock-sim/results.csv

echo "== lwsim: the line profile (LWSIM_LINES) names the atomic LWLock's code on its top line"
LWSIM_LINES=1 target/lwsim/release/lwbench --engine sim --cores 8 --workload end-xact --locks atomic \
    --threads 8 --trials 1 --duration 100us --warmup 50us --out target/lwsim/line-profile \
    2>target/lwsim/line-profile.err >/dev/null
grep -q '^lwsim line profile: ' target/lwsim/line-profile.err
grep -q 'AtomicLwLock<P>' target/lwsim/line-profile.err

echo "== lwsim: sweep (atomic LWLock, xeon-2s-broadwell, 1..8 cores, 1 ms)"
cargo run --release -p lwlock --example lwsim -- --lock atomic --cores 1,2,4,8 --duration-us 1000

echo "== lwsim: speed (64 cores, 10 ms virtual, atomic LWLock, 95/5)"
cargo build --release -p lwlock --example lwsim
t0=$(date +%s%N)
target/lwsim/release/examples/lwsim --lock atomic --cores 64 --duration-us 10000
ms=$((($(date +%s%N) - t0) / 1000000))
echo "real: ${ms} ms (limit 30000 ms)"
if [ "$ms" -gt 30000 ]; then
    echo "lwsim speed check failed: ${ms} ms > 30 s" >&2
    exit 1
fi

echo "== lwsim: the PostgreSQL 9.4 -> 9.5 direction below the compute limit (pgbench-select, 1 us per transaction, Westmere-EX, 16 and 80 clients, ten seeds): decided, and as results.md reports it (atomic ahead at both)"
cargo test --release -p bench --features stats --test sim_direction -- --nocapture

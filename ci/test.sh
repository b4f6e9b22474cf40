#!/usr/bin/env bash
# Runs every test of the workspace: the import-circle check (ci/import-cycles.py), unit,
# integration and doc tests (debug; they include the fault-injection sweep, the unwind
# regressions and the broken-lock harness check), the API docs
# with warnings denied, parking_lot's own unit tests against lwlock (ci/peer-suites.sh), the same with
# the `stats` feature, the stress tests in release, the fault-injection sweep in release with its
# counts, a 60 s torture run, the simulator's tests (ci/sim.sh; among them a sharded sweep on a
# real single-node Slurm that the test starts and stops), and the loom/shuttle models with their
# mutation tests (ci/models.sh). Usage: ci/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's wall time is printed as it ends and again in a table at the end, so a run that
# grows can be traced to its step.
start=$(date +%s)
timings=()
step_name=""
step_t0=$start
end_step() {
  [ -n "$step_name" ] || return 0
  local dt=$(($(date +%s) - step_t0))
  timings+=("$(printf '%5d s  %s' "$dt" "${step_name:0:90}")")
  printf '<== %s: %d s\n' "${step_name:0:90}" "$dt"
}
step() {
  end_step
  step_name=$*
  step_t0=$(date +%s)
  printf '\n==> %s\n' "$*"
}

# The builds of a fresh run take about 13 GiB (debug, release, the simulator's, six model and
# mutant configurations, the peer suites): say so at the start rather than fail on ENOSPC at the end.
free_kib=$(df -Pk "$PWD" | awk 'NR == 2 { print $4 }')
if [ "${free_kib:-0}" -lt $((8 * 1024 * 1024)) ]; then
  echo "ci/test.sh: only $((free_kib / 1024 / 1024)) GiB free on the disk of $PWD; a fresh run's builds need about 13 GiB" >&2
  exit 1
elif [ "$free_kib" -lt $((15 * 1024 * 1024)) ]; then
  echo "ci/test.sh: warning: $((free_kib / 1024 / 1024)) GiB free; a fresh run's builds need about 13 GiB" >&2
fi

step "no import circle between the files of a crate (the checker's self-test, then the workspace); the engine-ratio, sensitivity-matrix and paired-ratio scripts' self-tests"
ci/import-cycles.py --self-test
ci/import-cycles.py
bench/scripts/engine-ratios.py --self-test
bench/scripts/sens-matrix.py --self-test
bench/scripts/paired-ratios.py --self-test

step "unit, integration and doc tests (debug)"
cargo test --workspace --all-targets
cargo test --workspace --doc

step "the application benchmark's per-trial file feeds the paired-ratio script (a format check, not a speed)"
appc=$(mktemp -d)
cargo run -q -p bench --example app_counters -- --threads 2 --trials 3 --duration 20ms \
  --scenarios mutex --out "$appc" >/dev/null
bench/scripts/paired-ratios.py "$appc" --over parking-lot | tee "$appc/ratios.md"
grep -q '^| mutex | – | 2 | default | ' "$appc/ratios.md"
rm -rf "$appc"

step "API docs without warnings; lwlock with every feature (serde, arc_lock, owning_ref, lock_api_05)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
RUSTDOCFLAGS="-D warnings" cargo doc -p lwlock --no-deps --all-features
cargo test -p lwlock --all-features --lib --tests

step "peer suites: parking_lot 0.12's and 0.13's own RwLock/Mutex/ReentrantMutex tests on lwlock"
ci/peer-suites.sh

step "tests with LWLOCK_STATS-style counters (feature stats)"
cargo test -p lwlock -p flexlock --features stats

step "stress tests (release)"
cargo test --release -p lwlock --test stress

step "fault-injection sweep (release, with group counters)"
cargo test --release -p flexlock --features stats --test fault_injection -- --nocapture

step "torture: every lock, 64 threads, random mixes, exits and panics (60 s)"
cargo run --release -p lwtorture -- --duration 60s

if [ -x ci/sim.sh ]; then
  step "lwsim: the many-core simulator (validation, sweep, speed)"
  LWSIM_CRATE_TESTS_DONE=1 ci/sim.sh
fi

if [ -x ci/models.sh ]; then
  step "loom and shuttle models"
  ci/models.sh
fi

end_step
echo
echo "== timings"
printf '%s\n' "${timings[@]}"
echo "all tests passed in $(( $(date +%s) - start ))s"

#!/usr/bin/env bash
# Runs every test of the workspace: unit, integration and doc tests (debug), the same with the
# `stats` feature, the stress tests in release, and the loom/shuttle models with their mutation
# tests (ci/models.sh). Usage: ci/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }
start=$(date +%s)

step "unit, integration and doc tests (debug)"
cargo test --workspace --all-targets
cargo test --workspace --doc

step "tests with LWLOCK_STATS-style counters (feature stats)"
cargo test -p lwlock -p flexlock --features stats

step "stress tests (release)"
cargo test --release -p lwlock --test stress

if [ -x ci/models.sh ]; then
  step "loom and shuttle models"
  ci/models.sh
fi

echo
echo "all tests passed in $(( $(date +%s) - start ))s"
